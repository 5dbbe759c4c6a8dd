"""The `ollama` provider: `/api/chat`, streamed as one JSON object per line.

Settings (environment):

    OLLAMA_HOST      host:port or URL of the server (default 127.0.0.1:11434;
                     `http://` and port 11434 are added when missing)
    OLLAMA_MODEL     default gpt-oss:latest
    OLLAMA_THINK     `true`, `false`, `low`, `medium` or `high`: sent as `think`;
                     unset sends nothing (models without thinking answer 400 to it)
    OLLAMA_NUM_CTX   context window, sent as `options.num_ctx`; unset sends none
    OLLAMA_VISION    `0` says the model does not read images (a turn with one fails
                     before anything is sent; earlier ones go as text); default 1:
                     a message's images go in its `images` (base64), the model
                     answers an error if it has no vision

Ollama's API has no tool choice: a compaction's summary (ports.TOOL_CHOICE `none`)
sends the tools as every request does, so its prompt keeps the cached prefix, and a
call the model makes anyway is ignored by the compaction (context/compaction.py).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import httpx

from ..base import keys
from ..base.errors import ProviderError
from ..conversation import images_in, text_of
from .calls import CUT_OFF, doing
from .http import HTTPProvider
from .window import tokens

DEFAULT_MODEL = "gpt-oss:latest"
DEFAULT_HOST = "127.0.0.1:11434"
THINK = {"true": True, "false": False, "low": "low", "medium": "medium", "high": "high"}


def host_url(host: str | None = None) -> str:
    """`OLLAMA_HOST` as a base URL: scheme and default port added when missing."""
    host = (host or keys.get("OLLAMA_HOST") or DEFAULT_HOST).strip().rstrip("/")
    if "://" not in host:
        host = f"http://{host}"
    url = httpx.URL(host)
    if not url.host:
        raise ProviderError(f"OLLAMA_HOST is not a host or URL: {host!r}")
    if url.port is None and url.scheme == "http":
        url = url.copy_with(port=11434)
    return str(url).rstrip("/")


class OllamaProvider(HTTPProvider):
    name = "ollama"
    hint = "is Ollama running? Start it with: ollama serve"

    def __init__(
        self,
        model: str | None = None,
        client: httpx.AsyncClient | None = None,
        *,
        host: str | None = None,
        think: bool | str | None = None,
    ) -> None:
        env = os.environ
        self.base_url = host_url(host)
        self.model = model or env.get("OLLAMA_MODEL") or DEFAULT_MODEL
        raw = env.get("OLLAMA_THINK", "").strip().lower()
        if think is None and raw:
            if raw not in THINK:
                raise ProviderError(f"OLLAMA_THINK must be one of {', '.join(THINK)}, got {raw!r}")
            think = THINK[raw]  # type: ignore[assignment]
        self.think = think
        ctx = env.get("OLLAMA_NUM_CTX", "").strip()
        if ctx and not ctx.isdigit():
            raise ProviderError(f"OLLAMA_NUM_CTX must be a whole number of tokens, got {ctx!r}")
        self.options = {"num_ctx": int(ctx)} if ctx else {}
        self.vision = env.get("OLLAMA_VISION", "1").strip().lower() not in (
            "0",
            "false",
            "no",
            "off",
        )
        super().__init__(client)

    async def window_lookup(self) -> int | None:
        """`OLLAMA_NUM_CTX` when set (what every request asks for); else `/api/show`:
        the model's `num_ctx` parameter, else its trained `*.context_length`."""
        if "num_ctx" in self.options:
            return int(self.options["num_ctx"])
        shown = await self.get_json(f"{self.base_url}/api/show", body={"model": self.model})
        if not isinstance(shown, dict):
            return None
        parameters = shown.get("parameters")
        for line in parameters.splitlines() if isinstance(parameters, str) else []:
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx" and value.strip().isdigit():
                return int(value.strip())
        info = shown.get("model_info")
        for key, value in info.items() if isinstance(info, dict) else []:
            if key.endswith(".context_length") and (found := tokens(value)) is not None:
                return found
        return None

    def status_text(self, status: int, message: str) -> str:
        text = super().status_text(status, message)
        if status == 404 and "not found" in message:
            text += f" (run: ollama pull {self.model})"
        return text

    def request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        body: dict[str, Any] = {"model": self.model, "stream": True, "keep_alive": "5m"}
        if self.think is not None:
            body["think"] = self.think
        if self.options:
            body["options"] = self.options
        if tools:
            body["tools"] = tools
        body["messages"] = encode(messages, self.vision)
        return f"{self.base_url}/api/chat", {"content-type": "application/json"}, body

    async def decode(self, response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
        count = 0
        async for line in self.lines(response):
            if not line.strip():
                continue
            chunk = self.parse(line, "NDJSON line")
            if not isinstance(chunk, dict):
                raise ProviderError(f"ollama: unexpected NDJSON line: {line[:120]!r}")
            if "error" in chunk:
                raise ProviderError(f"ollama: {chunk['error']}")
            message = chunk.get("message") or {}
            if isinstance(message.get("thinking"), str) and message["thinking"]:
                yield {"type": "thinking", "text": message["thinking"]}
            if isinstance(message.get("content"), str) and message["content"]:
                yield {"type": "saying", "text": message["content"]}
            for call in message.get("tool_calls") or []:
                count += 1
                function = call.get("function") or {}
                call_id = call.get("id") or f"call_{count}"
                yield doing(str(call_id), str(function.get("name", "")), function.get("arguments"))
            if chunk.get("done"):
                if chunk.get("done_reason") == "length":
                    yield dict(CUT_OFF)
                prompt, reply = chunk.get("prompt_eval_count"), chunk.get("eval_count")
                if isinstance(prompt, int) or isinstance(reply, int):
                    yield {
                        "type": "usage",
                        "input_tokens": prompt or 0,
                        "output_tokens": reply or 0,
                    }
                return
        raise ProviderError('ollama: the stream ended before "done": true')


def encode(messages: list[dict[str, Any]], vision: bool = True) -> list[dict[str, Any]]:
    """The agent's history in /api/chat shape: object arguments, `tool_name` on results;
    content parts (conversation.py) as the text and, with `vision`, `images`."""
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for message in messages:
        role, content = message["role"], message.get("content")
        if isinstance(content, list) and vision:
            text = "\n\n".join(p.get("text", "") for p in content if p.get("type") == "text")
            images = [p["data"] for p in images_in(content)]
            out.append({"role": role, "content": text, "images": images})
            continue
        text = text_of(content)
        if role == "tool":
            name = message.get("name") or names.get(message.get("tool_call_id", ""), "")
            out.append({"role": "tool", "tool_name": name, "content": text})
        elif role == "assistant" and message.get("tool_calls"):
            calls = message["tool_calls"]
            names.update({c["id"]: c["name"] for c in calls})
            out.append(
                {
                    "role": "assistant",
                    "content": text,
                    "tool_calls": [
                        {"function": {"name": c["name"], "arguments": c.get("arguments") or {}}}
                        for c in calls
                    ],
                }
            )
        else:
            out.append({"role": role, "content": text})
    return out
