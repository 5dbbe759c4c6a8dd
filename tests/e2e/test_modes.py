"""Modes and plans over the wire: `mode` in session/new and session/load, session/setMode,
event/mode (by either door), unknown_mode, plan mode's refusals, event/plan and the plan
session/load redraws."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e
IDS = ["build", "plan", "review", "verify"]
TODOS = [
    {"content": "read the code", "status": "completed"},
    {"content": "write the fix", "status": "in_progress"},
    {"content": "run the tests", "status": "pending"},
]


def of(client: Client, method: str) -> list[dict]:
    return [n["params"] for n in client.notifications if n["method"] == method]


async def test_session_new_lists_the_modes_with_build_on(client: Client) -> None:
    mode = (await within(client.new_session()))["mode"]
    assert mode["current"] == "build"
    assert [m["id"] for m in mode["available"]] == IDS
    assert all(set(m) == {"id", "name", "description"} for m in mode["available"])


async def test_set_mode_answers_the_mode_and_sends_event_mode(client: Client, session: str) -> None:
    answer = await within(client.set_mode(session, "plan"))
    assert answer["mode"]["current"] == "plan"
    assert [m["id"] for m in answer["mode"]["available"]] == IDS
    (event,) = of(client, "event/mode")
    assert event["sessionId"] == session and event["mode"] == answer["mode"]
    await within(client.set_mode(session, "plan"))  # no change: no event
    assert len(of(client, "event/mode")) == 1


async def test_an_unknown_mode_is_unknown_mode_with_the_ids(client: Client, session: str) -> None:
    with pytest.raises(RpcError) as raised:
        await within(client.set_mode(session, "nope"))
    assert raised.value.code == -32602
    assert raised.value.data["kind"] == "unknown_mode"
    assert raised.value.data["modes"] == IDS
    with pytest.raises(RpcError) as bad:
        await within(client.request("session/setMode", {"sessionId": session, "modeId": 3}))
    assert bad.value.data["kind"] == "invalid_params"
    assert not of(client, "event/mode")


async def test_the_mode_command_is_the_same_door(client: Client, session: str) -> None:
    answer = await within(client.command(session, "/mode verify"))
    assert answer["output"] == "  → mode: verify"
    (event,) = of(client, "event/mode")
    assert event["mode"]["current"] == "verify"
    listed = await within(client.command(session, "/mode"))
    assert "* verify" in listed["output"]


async def test_set_mode_while_a_turn_runs_reaches_its_next_request(
    client: Client, session: str
) -> None:
    script = "!tools " + json.dumps(
        [["execute", {"command": "sleep 1; echo slow"}], ["write", {"path": "x", "content": "y"}]]
    )
    turn = await client.start_turn(session, script)
    async for event in turn.events():
        if event["method"] == "event/doing":  # the first call runs: switch now
            answer = await within(client.set_mode(session, "plan"))
            assert answer["mode"]["current"] == "plan"
    result = await within(turn)
    assert result["stopReason"] == "end_turn"
    results = of(client, "event/result")
    assert results[0]["ok"] is True  # started in build mode
    assert results[1]["ok"] is False and "plan mode" in results[1]["result"]["error"]


async def test_plan_mode_refuses_writes_over_the_wire(
    client: Client, session: str, workdir: Path
) -> None:
    await within(client.set_mode(session, "plan"))
    (workdir / "a.txt").write_text("needle\n")
    calls = [["write", {"path": "b.txt", "content": "x"}], ["grep", {"pattern": "needle"}]]
    await within(client.turn(session, "!tools " + json.dumps(calls)))
    write, grep = of(client, "event/result")
    assert write["ok"] is False and "write is not allowed in plan mode" in write["result"]["error"]
    assert grep["ok"] is True and "needle" in grep["result"]["content"]
    assert not (workdir / "b.txt").exists()


async def test_todo_sends_event_plan_and_session_load_has_the_last_plan_and_mode(
    spawn, client: Client, session: str
) -> None:
    await within(client.set_mode(session, "review"))
    first = "!tool todo " + json.dumps({"todos": TODOS[:1]})
    await within(client.turn(session, first))
    second = "!tool todo " + json.dumps({"todos": TODOS})
    answer = await within(client.turn(session, second))
    plans = of(client, "event/plan")
    assert [p["entries"] for p in plans] == [TODOS[:1], TODOS]
    assert plans[-1]["turnId"] == answer["turnId"] and plans[-1]["sessionId"] == session
    bad = "!tool todo " + json.dumps({"todos": [{"content": "x", "status": "done"}]})
    await within(client.turn(session, bad))
    assert len(of(client, "event/plan")) == 2  # a bad list is a failed call, no plan
    assert of(client, "event/result")[-1]["ok"] is False
    await within(client.close_session(session))

    other = await spawn()
    await within(other.initialize())
    loaded = await within(other.load_session(session))
    assert loaded["plan"] == {"entries": TODOS}
    assert loaded["mode"]["current"] == "review"
    fresh = await within(other.new_session())
    assert (await within(other.load_session(fresh["sessionId"])))["plan"] is None
