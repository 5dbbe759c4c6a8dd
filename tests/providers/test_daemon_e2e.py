"""`elelem daemon -p openai` against a local server: event/saying streams as the server sends."""

from __future__ import annotations

import asyncio
import json
import os
import threading

import pytest

from .replay import Gate, Reply

pytestmark = pytest.mark.e2e


def chunk(delta: dict | None, finish: str | None = None, usage: dict | None = None) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    data = {
        "id": "chatcmpl-9",
        "object": "chat.completion.chunk",
        "model": "local",
        "choices": choices,
    }
    if usage:
        data["usage"] = usage
    return b"data: " + json.dumps(data).encode() + b"\n\n"


async def test_turn_streams_saying_as_the_server_sends(server, tmp_path):
    from elelem_daemon.jsonrpc.client import Client

    gate = threading.Event()
    server.queue(
        Reply(
            [
                chunk({"role": "assistant", "content": "first "}),
                Gate(gate),  # the rest waits until the client has seen the first delta
                chunk({"content": "second"}),
                chunk({}, "stop"),
                chunk(
                    None, usage={"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}
                ),
                b"data: [DONE]\n\n",
            ]
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    env.update(OPENAI_BASE_URL=f"{server.url}/v1", OPENAI_MODEL="local", ELELEM_PROVIDER="")
    async with await Client.spawn("daemon", "-p", "openai", env=env, cwd=str(tmp_path)) as client:
        await client.initialize()
        session = await client.new_session(cwd=str(tmp_path))
        assert (session["provider"], session["model"]) == ("openai", "local")
        turn = await client.start_turn(session["sessionId"], "hi")
        seen = []
        async for message in turn.events():
            if message["method"] == "event/saying":
                seen.append((message["params"]["text"], gate.is_set()))
                gate.set()
        result = await asyncio.wait_for(turn.result(), 30)
    assert seen == [("first ", False), ("second", True)]
    assert result["reply"] == "first second"
    assert result["stopReason"] == "end_turn"
    assert result["usage"] == {"input_tokens": 12, "output_tokens": 2}
    posts = [r for r in server.requests if r.method == "POST"]  # besides the window's lookup
    assert posts[0].json["messages"][-1] == {"role": "user", "content": "hi"}


async def test_daemon_turn_error_names_the_provider(server, tmp_path):
    from elelem_daemon.jsonrpc.client import Client

    from .replay import json_reply

    server.queue(json_reply(404, {"error": {"message": "The model `nope` does not exist"}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    env.update(OPENAI_BASE_URL=f"{server.url}/v1", ELELEM_PROVIDER="")
    async with await Client.spawn("daemon", env=env, cwd=str(tmp_path)) as client:
        await client.initialize()
        session = await client.new_session(cwd=str(tmp_path), provider="openai", model="nope")
        result = await client.turn(session["sessionId"], "hi")
    assert result["reply"] == "Error: openai 404: The model `nope` does not exist"
    assert result["stopReason"] == "error"


async def test_a_reply_cut_off_by_the_token_limit_says_max_tokens(server, tmp_path):
    from elelem_daemon.jsonrpc.client import Client

    from .conftest import stream

    server.queue(stream("openai_length.sse"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    env.update(OPENAI_BASE_URL=f"{server.url}/v1", OPENAI_API_KEY="none", ELELEM_PROVIDER="")
    async with await Client.spawn("daemon", "-p", "openai", env=env, cwd=str(tmp_path)) as client:
        await client.initialize()
        session = await client.new_session(cwd=str(tmp_path))
        result = await asyncio.wait_for(client.turn(session["sessionId"], "hi"), 30)
    assert (result["reply"], result["stopReason"]) == (
        "The README says: # Demo, a sm",
        "max_tokens",
    )
