"""Steering through the real daemon (issue 20): a `session/steer` sent while a tool runs
reaches the next request a real local model server receives (an OpenAI-style stream on
127.0.0.1 that records every request), after the tool round; `event/steer` says when;
the conversation and the stored session keep prompt, steer, reply. No turn running is
-32006 `not_running`; bad steers are refused and lose nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from providers.replay import Reply
from support import model as models
from support.model import Model

from elelem_daemon.jsonrpc.client import RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


def tool_call(name: str, arguments: dict[str, Any]) -> Reply:
    """One streamed answer asking for one tool call."""
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    return Reply(
        [
            b"data: " + json.dumps(chunk).encode() + b"\n\n",
            b"data: " + json.dumps(end).encode() + b"\n\n",
            b"data: [DONE]\n\n",
        ]
    )


@pytest.fixture
def model() -> Iterator[Model]:
    server = Model()
    yield server
    server.stop()


async def until(check: Any, seconds: float = 20.0) -> None:
    async def poll() -> None:
        while not check():
            await asyncio.sleep(0.02)

    await within(poll(), seconds)


async def test_a_steer_sent_while_a_tool_runs_reaches_the_next_request(
    spawn: Any, env: dict[str, str], model: Model, workdir: Path
) -> None:
    gate = workdir / "gate"
    wait = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo ran"
    model.queue(tool_call("execute", {"command": wait}), models.reply("the reply"))
    client = await spawn("-p", "openai", env=models.env(model, env))
    await within(client.initialize(), 30)
    sid = (await within(client.new_session(cwd=str(workdir)), 30))["sessionId"]
    turn = await client.start_turn(sid, "the prompt")
    events: list[dict[str, Any]] = []

    async def collect() -> None:
        async for event in turn.events():
            events.append(event)

    collecting = asyncio.ensure_future(collect())
    await until(lambda: any(e["method"] == "event/doing" for e in events))
    assert await within(client.steer(sid, "also look at b.py")) == {"queued": True}
    assert not any(e["method"] == "event/steer" for e in events)  # not taken yet
    gate.touch()
    result = await within(turn, 30)
    await within(collecting)
    assert result["reply"] == "the reply" and result["stopReason"] == "end_turn"
    sent = model.sent(1)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[1]["content"] == "the prompt" and sent[-1]["content"] == "also look at b.py"
    steered = [e for e in events if e["method"] == "event/steer"]
    assert [e["params"]["text"] for e in steered] == ["also look at b.py"]
    assert steered[0]["params"]["sessionId"] == sid
    assert steered[0]["params"]["turnId"] == result["turnId"]
    methods = [e["method"] for e in events]
    assert methods.index("event/result") < methods.index("event/steer")
    kept = [(m["role"], m["content"]) for m in await within(client.context(sid))][1:]
    assert kept == [
        ("user", "the prompt"),
        ("user", "also look at b.py"),
        ("assistant", "the reply"),
    ]
    await within(client.close_session(sid))
    loaded = await within(client.load_session(sid))
    assert [(m["role"], m["content"]) for m in loaded["messages"]] == kept
    redrawn = [e for e in loaded["history"] if e["type"] == "message"]
    assert [(m["role"], m["content"]) for m in redrawn] == kept


async def test_steer_with_no_turn_running_is_not_running(client: Any, session: str) -> None:
    with pytest.raises(RpcError) as caught:
        await within(client.steer(session, "hello"))
    assert caught.value.code == -32006
    assert caught.value.data["kind"] == "not_running"
    assert await within(client.context(session)) == [
        m for m in await within(client.context(session)) if m["role"] == "system"
    ]


async def test_bad_steers_are_refused_and_the_turn_goes_on(
    client: Any, session: str, workdir: Path
) -> None:
    gate = workdir / "gate"
    wait = f"while [ ! -e {gate} ]; do sleep 0.05; done"
    turn = await client.start_turn(session, f"!tool execute {json.dumps({'command': wait})}")
    events: list[dict[str, Any]] = []

    async def collect() -> None:
        async for event in turn.events():
            events.append(event)

    collecting = asyncio.ensure_future(collect())
    await until(lambda: any(e["method"] == "event/doing" for e in events))
    for params, kind in [
        ({"sessionId": session, "text": ""}, "invalid_params"),
        ({"sessionId": session, "text": "x" * 70000}, "invalid_params"),
        ({"sessionId": session, "text": 7}, "invalid_params"),
        ({"sessionId": session}, "invalid_params"),
        ({"sessionId": "nope", "text": "hi"}, "unknown_session"),
    ]:
        with pytest.raises(RpcError) as caught:
            await within(client.request("session/steer", params))
        assert caught.value.data["kind"] == kind, params
    assert await within(client.steer(session, "fine")) == {"queued": True}
    gate.touch()
    result = await within(turn, 30)
    await within(collecting)
    assert result["reply"] == "steered: fine. done."
    kept = [m["content"] for m in await within(client.context(session)) if m["role"] == "user"]
    assert kept[1:] == ["fine"]


async def test_a_cancel_of_an_answered_steer_changes_nothing(
    client: Any, session: str, workdir: Path
) -> None:
    """`session/steer` is answered the moment it is queued, so its `$/cancelRequest`
    finds nothing running: the steer stays and the turn takes it (protocol.md; over ACP,
    whose steering prompt waits for the turn, the cancel withdraws it: test_wire.py)."""
    gate = workdir / "gate"
    wait = f"while [ ! -e {gate} ]; do sleep 0.05; done"
    turn = await client.start_turn(session, f"!tool execute {json.dumps({'command': wait})}")
    events: list[dict[str, Any]] = []

    async def collect() -> None:
        async for event in turn.events():
            events.append(event)

    collecting = asyncio.ensure_future(collect())
    await until(lambda: any(e["method"] == "event/doing" for e in events))
    steer = {"jsonrpc": "2.0", "id": "steer-1", "method": "session/steer",
             "params": {"sessionId": session, "text": "still wanted"}}  # fmt: skip
    assert await within(client.send_as_is(steer)) == {"queued": True}
    await client.notify("$/cancelRequest", {"id": "steer-1"})
    assert await within(client.context(session))  # the cancel has been read
    gate.touch()
    result = await within(turn, 30)
    await within(collecting)
    assert result["reply"] == "steered: still wanted. done."
    assert [e["params"]["text"] for e in events if e["method"] == "event/steer"] == ["still wanted"]
