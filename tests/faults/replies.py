"""Scripted answers for the provider faults: recorded streams, tool calls, huge replies."""

from __future__ import annotations

import json
from typing import Any

from providers.conftest import STREAMS
from providers.replay import Reply


def text_stream(name: str = "openai") -> Reply:
    file = {"openai": "openai_text.sse", "ollama": "ollama_text.ndjson"}[name]
    kind = "application/x-ndjson" if name == "ollama" else "text/event-stream"
    return Reply([(STREAMS / file).read_bytes()], content_type=kind)


def sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)


def calls(*pairs: tuple[str, str]) -> Reply:
    """An OpenAI reply asking for tool calls: (name, arguments text) each."""
    fragments = [
        {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(pairs)
    ]
    body = sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": fragments}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )
    return Reply([body + b"data: [DONE]\n\n"])


def big_reply(megabytes: int) -> Reply:
    piece = "z" * 100_000
    chunk = sse({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    end = sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return Reply([chunk] * (megabytes * 10) + [end + b"data: [DONE]\n\n"])
