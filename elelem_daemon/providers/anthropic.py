"""The `anthropic` provider: the Messages API, streamed as server-sent events.

Settings (environment):

    ANTHROPIC_API_KEY           required
    ANTHROPIC_MODEL             default claude-opus-4-5
    ANTHROPIC_BASE_URL          default https://api.anthropic.com (`/v1/messages` is added)
    ANTHROPIC_MAX_TOKENS        default 16000
    ANTHROPIC_THINKING_BUDGET   extended thinking budget in tokens (>= 1024 and below
                                ANTHROPIC_MAX_TOKENS); unset or 0 leaves thinking off
    ANTHROPIC_CACHE_TTL         the prompt cache's lifetime: `5m` (default), `1h` (a
                                write then costs 2x input instead of 1.25x), or `off`

Prompt caching: `cache_control` breakpoints (at most the API's four) on the last tool,
on the system prompt (sent as one text block), and on the conversation's growing end:
the last user message and the one before it, so the end the last request cached is
still marked and read. The transcript keeps what comes before them byte-stable
(transcript.py). The usage reported: `input_tokens` is the whole prompt (the API's
uncached `input_tokens` plus `cache_read_input_tokens` and
`cache_creation_input_tokens`), `cache_read_tokens` and `cache_write_tokens` its
cached parts.

A compaction's summary (ports.TOOL_CHOICE `none`) keeps the tools, cache mark and all,
and sends `tool_choice: {"type": "none"}`: the same cached prefix, and no call.

A user message with images (content parts, conversation.py) is sent as `text` and
`image` blocks (`source: {type: base64, media_type, data}`), in the same order.

Thinking blocks arrive with a signature. They are kept (a `keep` event stores them on
the round's assistant message as `thinking_blocks`) and sent back unchanged ahead of
that message's `tool_use` blocks, as the API requires when a turn continues after tool use.
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
from ..ports import TOOL_CHOICE
from .calls import CUT_OFF, doing
from .http import Failure, HTTPProvider
from .window import tokens

log = logging.getLogger(__name__)
DEFAULT_MODEL = "claude-opus-4-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
VERSION = "2023-06-01"
KEEP = "thinking_blocks"
RETRY_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error"})
CACHE_TTLS = ("5m", "1h", "off")
BREAKPOINTS = 4  # the API's limit per request


def whole(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise ProviderError(f"{name} must be a whole number of tokens, got {raw!r}")
    return int(raw)


class AnthropicProvider(HTTPProvider):
    name = "anthropic"
    vision = True  # every current Claude model reads images
    billed = True  # turns/usage.py prices its tokens

    def __init__(
        self,
        model: str | None = None,
        client: httpx.AsyncClient | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        thinking_budget: int | None = None,
    ) -> None:
        self.api_key = api_key or keys.get("ANTHROPIC_API_KEY")
        if not self.api_key:
            raise ProviderError("anthropic: set ANTHROPIC_API_KEY to use this provider")
        self.model = model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
        base = base_url or keys.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        self.base = base.rstrip("/")
        self.url = self.base + "/v1/messages"
        self.max_tokens = max_tokens or whole("ANTHROPIC_MAX_TOKENS", 16000)
        if self.max_tokens < 1:
            raise ProviderError("ANTHROPIC_MAX_TOKENS must be at least 1")
        budget = (
            whole("ANTHROPIC_THINKING_BUDGET", 0) if thinking_budget is None else thinking_budget
        )
        if budget and not 1024 <= budget < self.max_tokens:
            raise ProviderError(
                f"ANTHROPIC_THINKING_BUDGET must be at least 1024 and below "
                f"ANTHROPIC_MAX_TOKENS ({self.max_tokens}), got {budget}"
            )
        self.thinking_budget = budget
        ttl = os.environ.get("ANTHROPIC_CACHE_TTL", "").strip().lower() or "5m"
        if ttl not in CACHE_TTLS:
            raise ProviderError(f"ANTHROPIC_CACHE_TTL must be 5m, 1h or off, got {ttl[:20]!r}")
        self.cache_ttl = ttl
        super().__init__(client)
        self.secrets = [self.api_key]

    async def window_lookup(self) -> int | None:
        """`max_input_tokens` of the Models API's entry for the model."""
        headers = {"x-api-key": self.api_key, "anthropic-version": VERSION}
        info = await self.get_json(f"{self.base}/v1/models/{self.model}", headers)
        return tokens(info.get("max_input_tokens")) if isinstance(info, dict) else None

    # -- request ----------------------------------------------------------------
    def request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        headers = {
            "x-api-key": self.api_key,
            "anthropic-version": VERSION,
            "content-type": "application/json",
        }
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "stream": True}
        mark = self.breakpoint()
        system = "\n\n".join(str(m["content"]) for m in messages if m["role"] == "system")
        if system:
            block: dict[str, Any] = {"type": "text", "text": system}
            body["system"] = [{**block, "cache_control": mark}] if mark else system
        if self.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        if tools:
            body["tools"] = [unwrap(tool) for tool in tools]
            if mark:
                body["tools"][-1]["cache_control"] = mark
            if TOOL_CHOICE.get() == "none":  # a compaction's summary: no call (ports.py)
                body["tool_choice"] = {"type": "none"}
        body["messages"] = encode(messages)
        if mark:
            left = BREAKPOINTS - bool(system) - bool(tools)
            mark_end(body["messages"], mark, left)
        return self.url, headers, body

    def breakpoint(self) -> dict[str, str] | None:
        """The `cache_control` of every breakpoint, or None with ANTHROPIC_CACHE_TTL=off."""
        if self.cache_ttl == "off":
            return None
        return {"type": "ephemeral", **({"ttl": "1h"} if self.cache_ttl == "1h" else {})}

    # -- answer -------------------------------------------------------------------
    async def decode(self, response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
        blocks: dict[int, dict[str, Any]] = {}
        kept: list[dict[str, Any]] = []
        usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0}
        stopped = False  # message_stop came
        async for events in self.events(response):
            for _, data in events:
                event = self.parse(data)
                kind = event.get("type")
                if kind == "message_start":
                    usage.update(counts(event["message"].get("usage")))
                elif kind == "content_block_start":
                    block = event["content_block"]
                    if block["type"] in ("thinking", "redacted_thinking"):
                        kept.append(dict(block))
                        blocks[event["index"]] = kept[-1]
                    else:
                        blocks[event["index"]] = {**block, "partial": ""}
                    if block["type"] == "text" and block.get("text"):
                        yield {"type": "saying", "text": block["text"]}
                elif kind == "content_block_delta":
                    delta, block = event["delta"], blocks[event["index"]]
                    if delta["type"] == "text_delta" and delta["text"]:
                        yield {"type": "saying", "text": delta["text"]}
                    elif delta["type"] == "thinking_delta":
                        block["thinking"] = block.get("thinking", "") + delta["thinking"]
                        yield {"type": "thinking", "text": delta["thinking"]}
                    elif delta["type"] == "signature_delta":
                        block["signature"] = delta["signature"]
                    elif delta["type"] == "input_json_delta":
                        block["partial"] += delta["partial_json"]
                elif kind == "content_block_stop":
                    block = blocks.pop(event["index"], {})
                    if block.get("type") == "tool_use":
                        yield doing(block["id"], block["name"], block["partial"])
                elif kind == "message_delta":
                    usage.update(counts(event.get("usage")))
                    if (event.get("delta") or {}).get("stop_reason") == "max_tokens":
                        log.info("anthropic: the reply hit max_tokens (ANTHROPIC_MAX_TOKENS)")
                        yield dict(CUT_OFF)
                elif kind == "message_stop":
                    stopped = True
                    break
                elif kind == "error":
                    raise stream_error(event.get("error") or {})
            if stopped:
                break
        if not stopped:
            raise ProviderError("anthropic: the stream ended before message_stop")
        if kept:
            yield {"type": "keep", "data": {KEEP: kept}}
        yield {"type": "usage", **normal(usage)}


WIRE_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def counts(usage: Any) -> dict[str, int]:
    """The counts of a `usage` object, as the API names them (each a whole number)."""
    if not isinstance(usage, dict):
        return {}
    return {
        k: v
        for k in WIRE_COUNTS
        if isinstance(v := usage.get(k), int) and not isinstance(v, bool) and v >= 0
    }


def normal(usage: dict[str, int]) -> dict[str, int]:
    """The API's counts as every provider reports them: `input_tokens` the whole prompt,
    `cache_read_tokens` / `cache_write_tokens` its cached parts (when the API said)."""
    read = usage.get("cache_read_input_tokens")
    wrote = usage.get("cache_creation_input_tokens")
    out = {
        "input_tokens": usage.get("input_tokens", 0) + (read or 0) + (wrote or 0),
        "output_tokens": usage.get("output_tokens", 0),
    }
    if read is not None:
        out["cache_read_tokens"] = read
    if wrote is not None:
        out["cache_write_tokens"] = wrote
    return out


def mark_end(messages: list[dict[str, Any]], mark: dict[str, str], left: int) -> None:
    """Breakpoints on the last block of the last `left` user messages (at most two): the
    growing end, and the end the last request marked. Every message's content goes as
    blocks, so a message reads the same whether it carries a breakpoint or not."""
    for message in messages:
        message["content"] = blocks(message["content"])
    users = [m for m in messages if m["role"] == "user"][-min(left, 2) :] if left > 0 else []
    for message in users:
        content = blocks(message["content"])
        if content:
            message["content"] = [*content[:-1], {**content[-1], "cache_control": mark}]


def stream_error(error: dict[str, Any]) -> Failure:
    kind = str(error.get("type") or "error")
    message = error.get("message") or kind
    return Failure(f"anthropic {kind}: {message}", retryable=kind in RETRY_TYPES)


def unwrap(tool: dict[str, Any]) -> dict[str, Any]:
    """OpenAI function definition → Anthropic tool."""
    fn = tool.get("function", tool)
    return {
        "name": fn["name"],
        "description": fn.get("description", ""),
        "input_schema": fn.get("parameters") or {"type": "object", "properties": {}},
    }


def encode(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The agent's history → Anthropic messages (system left out, same roles merged)."""
    out: list[dict[str, Any]] = []

    def add(role: str, content: str | list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"] = blocks(out[-1]["content"]) + blocks(content)
        else:
            out.append({"role": role, "content": content})

    for message in messages:
        role, content = message["role"], message.get("content") or ""
        if role == "system":
            continue
        if role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": str(content),
                "is_error": failed(content),
            }
            add("user", [result])
        elif role == "assistant" and (message.get("tool_calls") or message.get(KEEP)):
            parts = [dict(b) for b in message.get(KEEP) or []]
            if content:
                parts.append({"type": "text", "text": str(content)})
            parts += [
                {
                    "type": "tool_use",
                    "id": c["id"],
                    "name": c["name"],
                    "input": c.get("arguments") or {},
                }
                for c in message.get("tool_calls") or []
            ]
            add("assistant", parts)
        elif isinstance(content, list):
            add(role, [part(p) for p in content])
        elif content:
            add(role, str(content))
    return out


def part(value: dict[str, Any]) -> dict[str, Any]:
    """A kept content part (conversation.py) as an Anthropic content block."""
    if value.get("type") == "image":
        source = {"type": "base64", "media_type": value["mimeType"], "data": value["data"]}
        return {"type": "image", "source": source}
    return {"type": "text", "text": str(value.get("text", ""))}


def blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def failed(content: Any) -> bool:
    """A tool result whose JSON says `"ok": false`."""
    try:
        return json.loads(content).get("ok") is False
    except (TypeError, ValueError, AttributeError):
        return False
