"""The API key goes in its header and nowhere else: not in events, replies, errors or logs."""

from __future__ import annotations

import json
import logging
import socket

import pytest

from .conftest import CANARY, session_for, stream
from .replay import Reply, json_reply
from .samples import FIRST

KEY = CANARY.encode()


def echoing(name: str) -> list[Reply]:
    """Answers that quote the key back, as some APIs do in their error messages."""
    message = f"Incorrect API key provided: {CANARY}"
    if name == "anthropic":
        unauthorized = {
            "type": "error",
            "error": {"type": "authentication_error", "message": message},
        }
        broken = b'event: content_block_delta\ndata: {"oops": "' + KEY + b'"\n\n'
        in_stream = (
            b'event: error\ndata: {"type":"error","error":{"type":"api_error",'
            b'"message":"' + KEY + b'"}}\n\n'
        )
    else:
        unauthorized = {"error": {"message": message, "code": "invalid_api_key"}}
        broken = b'data: {"oops": "' + KEY + b'"\n\n'
        in_stream = b'data: {"error":{"message":"bad key ' + KEY + b'"}}\n\n'
    return [
        json_reply(503, unauthorized, {"retry-after": "0"}),  # retried, and logged
        json_reply(401, unauthorized),
        Reply([FIRST[name], broken]),
        Reply([FIRST[name], in_stream]),
    ]


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_key_never_leaks(name, server, monkeypatch, tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    session, out = session_for(name, server, monkeypatch, tmp_path)
    text = {"anthropic": "anthropic_text.sse", "openai": "openai_text.sse"}[name]
    server.queue(stream(text), *echoing(name))
    replies = [(await session.turn(f"turn {n}")).reply for n in range(4)]
    assert replies[0] == "The README says: # Demo"
    assert all(r.startswith("Error: ") and "***" in r for r in replies[1:]), replies

    with socket.socket() as s:  # and a refused connection, retried and logged
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv(
        "OPENAI_BASE_URL" if name == "openai" else "ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}"
    )
    session.switch(name)
    session.provider.sleep = no_wait
    replies.append((await session.turn("refused")).reply)
    assert "cannot connect" in replies[-1]

    header = "x-api-key" if name == "anthropic" else "authorization"
    assert all(CANARY in r.headers[header] for r in server.requests if r.method == "POST")
    seen = "\n".join(
        [
            json.dumps(out.events, default=str),
            json.dumps(replies),
            json.dumps(list(session.conversation)),
            json.dumps(session.context),
            caplog.text,
            *capsys.readouterr(),
        ]
    )
    assert "retry 1/2" in caplog.text
    assert "Incorrect API key provided: ***" in seen  # the echo was there, and redacted
    assert CANARY not in seen


async def no_wait(seconds: float) -> None:
    pass
