"""The `openai` provider: Chat Completions, streamed, for OpenAI and compatible servers
(llama.cpp's server, vLLM, LM Studio, OpenRouter, Ollama's /v1).

Settings (environment):

    OPENAI_API_KEY        required for api.openai.com; optional for other servers
    OPENAI_MODEL          default gpt-4o
    OPENAI_BASE_URL       default https://api.openai.com/v1 (`/chat/completions` is added)
    OPENAI_MAX_TOKENS     a reply cap, sent as `max_completion_tokens` to api.openai.com
                          and as `max_tokens` elsewhere; unset sends none
    OPENAI_STREAM_USAGE   `0` stops asking for usage (`stream_options`), for servers
                          that reject it; default 1
    OPENAI_VISION         `0` says the model does not read images: a turn with an image
                          then fails before anything is sent, and images already in
                          the conversation go as text (`[image: image/png, N bytes]`);
                          default 1: images go as `image_url` parts with data: URLs
    OPENAI_TOOL_CHOICE    `auto` (default), `required` or `none`, sent with tools; or two,
                          `FIRST,AFTER`: FIRST while the conversation ends with the user's
                          message, AFTER once tool results follow (`required,none` makes
                          a small local model call a tool, then answer)
    OPENAI_PROMPT_CACHE   `0` sends neither `prompt_cache_key` nor `cache_prompt`; default 1

Prompt caching: every request carries `prompt_cache_key`, the session's id (the session
sets `cache_key`), so OpenAI routes a session's requests to the cache that holds its
prefix, as Codex does. A server other than api.openai.com also gets `cache_prompt:
true`: llama.cpp's server then reuses its slot's KV cache for the common prefix
(servers that do not know the field ignore it). No `id_slot` is sent: llama.cpp
already gives a request the slot whose cached prompt shares the most with it, and a
pinned slot would make a second session wait for the first. Usage: `input_tokens` is
`prompt_tokens`, `cache_read_tokens` is `prompt_tokens_details.cached_tokens`, or
llama.cpp's `timings.cache_n` when only that is sent.

`delta.reasoning_content` and `delta.reasoning` are thinking; reasoning is never sent back.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

import httpx

from ..base import keys
from ..base.errors import ProviderError
from .calls import CUT_OFF, doing
from .http import RETRY_STATUS, Failure, HTTPProvider
from .window import tokens

log = logging.getLogger(__name__)
DEFAULT_MODEL = "gpt-4o"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
TOOL_CHOICES = ("auto", "required", "none")


class OpenAIProvider(HTTPProvider):
    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        client: httpx.AsyncClient | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        env = os.environ
        self.base_url = (base_url or keys.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ProviderError(
                f"OPENAI_BASE_URL must start with http:// or https://, got {self.base_url!r}"
            )
        self.api_key = api_key or keys.get("OPENAI_API_KEY")
        self.official = httpx.URL(self.base_url).host == "api.openai.com"
        self.billed = self.official  # a local server's model name says nothing of a price
        if self.official and not self.api_key:
            raise ProviderError("openai: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server")
        self.model = model or env.get("OPENAI_MODEL") or DEFAULT_MODEL
        raw = env.get("OPENAI_MAX_TOKENS", "").strip()
        if raw and not raw.isdigit():
            raise ProviderError(f"OPENAI_MAX_TOKENS must be a whole number of tokens, got {raw!r}")
        self.max_tokens = int(raw) if raw else None
        self.stream_usage = switch(env.get("OPENAI_STREAM_USAGE", "1"))
        self.tool_choice = tool_choice(env.get("OPENAI_TOOL_CHOICE", ""))
        self.vision = switch(env.get("OPENAI_VISION", "1"))
        self.prompt_cache = switch(env.get("OPENAI_PROMPT_CACHE", "1"))
        super().__init__(client)
        self.secrets = [self.api_key]

    async def window_lookup(self) -> int | None:
        """llama.cpp's `/props` (`n_ctx`: the context the server runs with), else the
        model's entry in `/models` (vLLM's `max_model_len`, LM Studio's and OpenRouter's
        `context_length`). OpenAI's own API says neither: the known table answers."""
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        if not self.official:
            root = self.base_url.removesuffix("/v1")
            try:
                props = await self.get_json(f"{root}/props", headers)
            except ProviderError:
                props = None
            if isinstance(props, dict):
                settings = props.get("default_generation_settings")
                found = tokens(settings.get("n_ctx")) if isinstance(settings, dict) else None
                if (found := found or tokens(props.get("n_ctx"))) is not None:
                    return found
        listed = await self.get_json(f"{self.base_url}/models", headers)
        entries = listed.get("data") if isinstance(listed, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("id") == self.model:
                for key in ("max_model_len", "context_length", "context_window"):
                    if (found := tokens(entry.get(key))) is not None:
                        return found
        return None

    def request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        body: dict[str, Any] = {"model": self.model, "stream": True}
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if self.max_tokens:
            body["max_completion_tokens" if self.official else "max_tokens"] = self.max_tokens
        if self.prompt_cache and self.cache_key:
            body["prompt_cache_key"] = self.cache_key
        if self.prompt_cache and not self.official:
            body["cache_prompt"] = True
        if tools:
            body["tools"] = tools
            after_results = bool(messages) and messages[-1].get("role") == "tool"
            body["tool_choice"] = self.tool_choice[-1 if after_results else 0]
        body["messages"] = encode(messages, self.vision)
        return f"{self.base_url}/chat/completions", headers, body

    async def decode(self, response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
        calls: dict[int, dict[str, str]] = {}
        usage: dict[str, int] = {}
        timing: dict[str, int] = {}
        finished = False
        done = False
        async for events in self.events(response):
            for _, data in events:
                if data.strip() == "[DONE]":
                    done = True
                    break
                chunk = self.parse(data)
                if not isinstance(chunk, dict):
                    raise ProviderError(f"openai: unexpected stream data: {data[:120]!r}")
                if "error" in chunk or chunk.get("object") == "error":
                    raise stream_error(chunk)
                if isinstance(chunk.get("usage"), dict):
                    usage = counts(chunk["usage"]) or usage
                if isinstance(chunk.get("timings"), dict):  # llama.cpp's own counts
                    timing = timed(chunk["timings"])
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                    if isinstance(reasoning, str) and reasoning:
                        yield {"type": "thinking", "text": reasoning}
                    content = delta.get("content")
                    if content and isinstance(content, str):
                        yield {"type": "saying", "text": content}
                    if "tool_calls" in delta:
                        for fragment in delta["tool_calls"] or []:
                            gather(calls, fragment)
                    finish = choice.get("finish_reason")
                    if finish == "error":
                        raise stream_error(chunk)
                    if finish and not finished:
                        finished = True
                        for event in doings(calls):
                            yield event
                        if finish == "length":
                            log.info("openai: the reply hit the model's token limit")
                            yield dict(CUT_OFF)
            if done:
                break
        if not done and not finished:
            raise ProviderError("openai: the stream ended before finish_reason or [DONE]")
        if not finished:
            for event in doings(calls):
                yield event
        if usage or timing:
            yield {"type": "usage", **timing, **usage}


def switch(raw: str) -> bool:
    """A setting that is on unless it says `0`, `false`, `no` or `off`."""
    return raw.strip().lower() not in ("0", "false", "no", "off")


def tool_choice(raw: str) -> tuple[str, ...]:
    """`OPENAI_TOOL_CHOICE`: one choice for every request, or FIRST,AFTER (tool results)."""
    choices = tuple(part.strip().lower() for part in raw.split(",")) if raw.strip() else ("auto",)
    if len(choices) > 2 or any(choice not in TOOL_CHOICES for choice in choices):
        raise ProviderError(
            "OPENAI_TOOL_CHOICE must be auto, required or none, or two of them as "
            f"FIRST,AFTER (e.g. required,none), got {raw[:80]!r}"
        )
    return choices


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


def stream_error(chunk: dict[str, Any]) -> Failure:
    error = chunk.get("error", chunk)
    if isinstance(error, dict):
        message, code = error.get("message") or json.dumps(error), error.get("code")
    else:
        message, code = str(error), None
    retryable = code in RETRY_STATUS or code in ("server_error", "rate_limit_exceeded")
    return Failure(f"openai: {message}", retryable=retryable)


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
