"""The `task` sub-agent through the real daemon (issue 20): the child's final answer is
the task call's `event/result` and what the model reads; every event of the child
carries `parentToolCallId`, the parent's none; the child has read-only tools and no
`task`; cancelling the parent kills the child's tool process and ends the turn."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import Client

from .conftest import cmdline, descendants, running, within

pytestmark = pytest.mark.e2e

SLOW_READ = """
from elelem_daemon.builtins.shell import run

def register(plugin):
    @plugin.tool("slowread", "Reads slowly", {}, kind="read")
    async def slowread(session, args):
        return await run(["sleep", "31.5"], session.cwd)
"""


def task(prompt: str) -> str:
    return "!tool task " + json.dumps({"prompt": prompt})


async def events_of(client: Client, session: str, text: str) -> tuple[dict, list[dict]]:
    turn = await client.start_turn(session, text)
    events = [event async for event in turn.events()]
    return await within(turn, 30), events


async def test_the_child_answer_is_the_task_result_and_its_events_are_nested(
    client: Client, session: str, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("hello\n")
    result, events = await within(
        events_of(client, session, task('!tool read {"path": "a.txt"}')), 30
    )
    assert result["reply"] == "done." and result["stopReason"] == "end_turn"
    nested = [e for e in events if "parentToolCallId" in e["params"]]
    mine = [e for e in events if "parentToolCallId" not in e["params"]]
    doing = [e["params"] for e in mine if e["method"] == "event/doing"]
    assert [d["name"] for d in doing] == ["task"]
    parent = doing[0]["id"]
    assert {e["params"]["parentToolCallId"] for e in nested} == {parent}
    child = [(e["method"], e["params"].get("name")) for e in nested]
    assert ("event/doing", "read") in child and ("event/result", "read") in child
    assert ("event/saying", None) in child  # the child's own text, nested too
    read = next(e["params"] for e in nested if e["method"] == "event/result")
    assert read["result"]["content"] == "hello\n"
    assert parent == "stub-1" and read["id"] == "stub-2"  # the stub's ids: one per session
    done = [e["params"] for e in mine if e["method"] == "event/result"]
    assert done == [
        {
            "sessionId": session,
            "turnId": result["turnId"],
            "id": parent,
            "name": "task",
            "ok": True,
            "result": {"result": "done.", "ok": True},
        }
    ]
    last_nested = max(i for i, e in enumerate(events) if "parentToolCallId" in e["params"])
    finished = next(i for i, e in enumerate(events) if e in mine and e["method"] == "event/result")
    assert last_nested < finished  # the child is over before the task's result
    kept = [m["role"] for m in await within(client.context(session))]
    assert kept == ["system", "user", "assistant"]  # nothing of the child is kept


async def test_the_child_has_read_only_tools_and_no_task(
    client: Client, session: str, workdir: Path
) -> None:
    for inner in (
        '!tool write {"path": "made.txt", "content": "x"}',
        '!tool execute {"command": "touch made.txt"}',
        task("!echo deeper"),
    ):
        _, events = await within(events_of(client, session, task(inner)), 30)
        child = [e["params"] for e in events if "parentToolCallId" in e["params"]]
        results = [p for p in child if p.get("name") and p["name"].endswith("?")]
        assert results, child  # an unknown tool to the child
        assert all(not p["ok"] for p in child if "ok" in p)
    assert not (workdir / "made.txt").exists()


async def test_cancelling_the_parent_kills_the_child_tool(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    plugins = Path(env["HOME"]) / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "slow.py").write_text(SLOW_READ)
    client = await spawn()
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    turn = await client.start_turn(session, task("!tool slowread {}"))
    events: list[dict] = []

    async def collect() -> None:
        async for event in turn.events():
            events.append(event)

    collecting = asyncio.ensure_future(collect())
    pids: set[int] = set()
    for _ in range(500):
        pids = descendants(client.process.pid)
        if any(cmdline(pid).startswith("sleep 31.5") for pid in pids):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the child's tool never ran")

    def nested_doing() -> bool:
        return any(
            e["method"] == "event/doing" and e["params"].get("parentToolCallId") for e in events
        )

    for _ in range(500):  # sent before the tool ran; the collector may not have read it yet
        if nested_doing():
            break
        await asyncio.sleep(0.02)
    assert nested_doing()
    await turn.cancel()
    result = await within(turn, 10)
    await within(collecting)
    assert result["stopReason"] == "cancelled"
    for _ in range(100):
        if not [pid for pid in pids if running(pid)]:
            break
        await asyncio.sleep(0.02)
    assert not [pid for pid in pids if running(pid) and "sleep 31.5" in cmdline(pid)]
    again = await within(client.turn(session, "!echo still here"), 30)
    assert again["reply"] == "still here"
