"""What the failure tests share: one event in each wire format, error bodies, helpers."""

from __future__ import annotations

import socket

import pytest

from elelem_daemon.base.errors import ProviderError

from .conftest import PROMPT, README_TOOL

ALL = ["anthropic", "openai", "ollama"]
PATH = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions", "ollama": "/api/chat"}
FIRST = {  # one saying event, in each wire format
    "anthropic": b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
    b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\nevent: content_block_start\n'
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'
    b'\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"Let me look."}}\n\n',
    "openai": b'data: {"choices":[{"index":0,"delta":{"content":"Let me look."}}]}\n\n',
    "ollama": b'{"message":{"role":"assistant","content":"Let me look."},"done":false}\n',
}
ERROR_BODY = {
    "anthropic": (
        401,
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            "request_id": "req_011",
        },
    ),
    "openai": (
        401,
        {
            "error": {
                "message": "Incorrect API key provided.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
    ),
    "ollama": (404, {"error": 'model "gpt-oss:latest" not found, try pulling it first'}),
}
ERROR_TEXT = {
    "anthropic": "anthropic 401: invalid x-api-key",
    "openai": "openai 401: Incorrect API key provided.",
    "ollama": 'ollama 404: model "gpt-oss:latest" not found, try pulling it first '
    "(run: ollama pull gpt-oss:latest)",
}


async def failure(provider) -> tuple[list[dict], str]:
    events = []
    with pytest.raises(ProviderError) as caught:
        async for event in provider.fetch(PROMPT, [README_TOOL]):
            events.append(event)
    return events, str(caught.value)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def provider_events(provider) -> list[dict]:
    return [e async for e in provider.fetch(PROMPT, [README_TOOL])]
