"""Chat Completions shapes for the `openai` provider: the agent's messages as the API
takes them (`encode`), and the pieces of a streamed answer put back together (`gather`,
`doings`, `counts`, `timed`)."""

from __future__ import annotations

import json
from typing import Any

from .calls import doing


def gather(calls: dict[int, dict[str, str]], fragment: dict[str, Any]) -> None:
    """Fold one `delta.tool_calls[]` fragment into its call's buffer (keyed by index)."""
    index = fragment.get("index")
    if not isinstance(index, int):
        index = len(calls)
    buffer = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
    if fragment.get("id"):
        buffer["id"] = str(fragment["id"])
    function = fragment.get("function") or {}
    if function.get("name"):
        buffer["name"] = str(function["name"])
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        buffer["arguments"] += arguments
    elif arguments is not None:
        buffer["arguments"] += json.dumps(arguments)


def doings(calls: dict[int, dict[str, str]]) -> list[dict[str, Any]]:
    events = [
        doing(call["id"] or f"call_{n}", call["name"], call["arguments"])
        for n, (_, call) in enumerate(sorted(calls.items()), 1)
    ]
    calls.clear()
    return events


def count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def counts(usage: dict[str, Any]) -> dict[str, int]:
    prompt, completion = count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))
    if prompt is None or completion is None:
        return {}
    out = {"input_tokens": prompt, "output_tokens": completion}
    details = usage.get("prompt_tokens_details")
    cached = count(details.get("cached_tokens")) if isinstance(details, dict) else None
    if cached is not None:
        out["cache_read_tokens"] = min(cached, prompt)
    return out


def timed(timings: dict[str, Any]) -> dict[str, int]:
    """llama.cpp's `timings`: `prompt_n` tokens evaluated now, `cache_n` reused; they
    stand in for what `usage` does not say."""
    evaluated, reused = count(timings.get("prompt_n")), count(timings.get("cache_n"))
    out: dict[str, int] = {}
    if reused is not None:
        out["cache_read_tokens"] = reused
    if evaluated is not None:
        out["input_tokens"] = evaluated + (reused or 0)
    if (predicted := count(timings.get("predicted_n"))) is not None:
        out["output_tokens"] = predicted
    return out


def encode(messages: list[dict[str, Any]], vision: bool = True) -> list[dict[str, Any]]:
    """The agent's history in Chat Completions shape; tool calls as JSON-string arguments.

    An assistant message with only tool calls gets `content: ""`, not null: OpenAI takes
    both, llama-cpp-python's server rejects null. Content parts (conversation.py) go as
    `text` and `image_url` parts, or, without `vision`, as their text.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message["tool_call_id"],
                    "content": str(content or ""),
                }
            )
        elif role == "assistant" and message.get("tool_calls"):
            out.append(
                {
                    "role": "assistant",
                    "content": "" if content is None else str(content),
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                "arguments": json.dumps(
                                    c.get("arguments") or {},
                                    separators=(",", ":"),
                                    ensure_ascii=False,
                                ),
                            },
                        }
                        for c in message["tool_calls"]
                    ],
                }
            )
        elif isinstance(content, list):
            from ..conversation import text_of

            out.append({"role": role, "content": parts(content) if vision else text_of(content)})
        else:
            out.append({"role": role, "content": "" if content is None else str(content)})
    return out


def parts(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"type": "image_url", "image_url": {"url": f"data:{p['mimeType']};base64,{p['data']}"}}
        if p.get("type") == "image"
        else {"type": "text", "text": str(p.get("text", ""))}
        for p in content
    ]
