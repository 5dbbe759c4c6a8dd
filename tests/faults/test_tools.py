"""Tool faults, through the real daemon: whatever a tool does, the turn ends (with a
failed result the model can read, or cancelled), the session goes on, and no process
the tool started survives a cancel, a timeout or its own exit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import Client

from .conftest import all_gone, anywhere, plugin, tree_with, within

pytestmark = pytest.mark.e2e

FAULTY = """
import asyncio
import time


def register(plugin):
    @plugin.tool("boom", "raises", {})
    def boom(session, args):
        raise RuntimeError("kaboom")

    @plugin.tool("stuck", "never returns", {})
    async def stuck(session, args):
        await asyncio.sleep(3600)

    @plugin.tool("blocked", "blocks its thread", {})
    def blocked(session, args):
        time.sleep(3600)
"""


def call(name: str, **args: Any) -> str:
    return f"!tool {name} {json.dumps(args)}"


async def results(client: Client, session: str, text: str, seconds: float = 30) -> tuple:
    """Run a turn; return its response and its event/result params."""
    events: list[dict[str, Any]] = []
    reply = await within(client.turn(session, text, on_event=events.append), seconds)
    return reply, [e["params"] for e in events if e["method"] == "event/result"]


async def still_works(client: Client, session: str) -> None:
    reply = await within(client.turn(session, "!echo still here"))
    assert (reply["reply"], reply["stopReason"]) == ("still here", "end_turn")


@pytest.fixture
async def faulty(client: Client, workdir: Path) -> str:
    plugin(workdir, "faulty", FAULTY)
    return (await within(client.new_session(cwd=str(workdir), trusted=True)))["sessionId"]


async def test_a_handler_that_raises_is_a_failed_result(client: Client, faulty: str) -> None:
    reply, (result,) = await results(client, faulty, call("boom"))
    assert (result["ok"], result["result"]["error"]) == (False, "kaboom")
    assert (reply["reply"], reply["stopReason"]) == ("done.", "end_turn")
    await still_works(client, faulty)


@pytest.mark.parametrize("tool", ["stuck", "blocked"])
async def test_a_handler_that_hangs_is_ended_by_cancel(
    client: Client, faulty: str, tool: str
) -> None:
    """No built-in limit on a plugin handler (the product has none): cancel is the bound,
    for a coroutine and for a sync handler blocked in its thread alike."""
    turn = await client.start_turn(faulty, call(tool))
    async for event in turn.events():
        if event["method"] == "event/doing":
            break
    await turn.cancel()
    reply = await within(turn.result(), 5)
    assert reply["stopReason"] == "cancelled"
    await still_works(client, faulty)


async def test_a_command_that_hangs_times_out_and_leaves_nothing(
    client: Client, session: str
) -> None:
    command = 'trap "" TERM; (sleep 41 &); sleep 42 & sleep 43'
    started = asyncio.ensure_future(
        results(client, session, call("execute", command=command, timeout=2))
    )
    pids = await tree_with(client.process.pid, "sleep 43")
    reply, (result,) = await within(started, 20)
    assert result["ok"] is False
    assert result["result"]["error"] == "timed out after 2s"
    assert reply["stopReason"] == "end_turn"
    assert await all_gone(pids) == []
    await still_works(client, session)


GRANDCHILDREN = (
    "(sleep 51 &); sleep 52 & bash -c 'sleep 53 & wait' & setsid sleep 54 & "
    "nohup sleep 55 >/dev/null 2>&1 & wait"
)


async def test_cancel_kills_every_grandchild_even_one_in_its_own_session(
    client: Client, session: str
) -> None:
    turn = await client.start_turn(session, call("execute", command=GRANDCHILDREN))
    pids = await tree_with(client.process.pid, "sleep 55")
    pids = await tree_with(client.process.pid, "sleep 54") | pids
    pids |= await anywhere("sleep 51", exact=True)  # orphaned at once: out of the tree
    assert len(pids) >= 5
    await turn.cancel()
    assert (await within(turn.result(), 5))["stopReason"] == "cancelled"
    assert await all_gone(pids) == []
    await still_works(client, session)


async def test_a_command_that_leaves_a_child_holding_its_output_returns(
    client: Client, session: str
) -> None:
    command = "sleep 61 & echo $!; echo started"
    reply, (result,) = await results(client, session, call("execute", command=command), 10)
    child, started = result["result"]["content"].split()  # in 10 s, not the 120 s timeout
    assert (started, result["result"]["exit_status"]) == ("started", 0)
    assert await all_gone({int(child)}) == []


async def test_a_child_in_its_own_session_holding_the_output_is_killed_too(
    client: Client, session: str
) -> None:
    command = "setsid sleep 62 & echo $!; echo started"
    reply, (result,) = await results(client, session, call("execute", command=command), 10)
    child, started = result["result"]["content"].split()
    assert (started, result["result"]["exit_status"]) == ("started", 0)
    assert await all_gone({int(child)}) == []


async def test_cancel_kills_a_double_forked_process_that_holds_the_output(
    client: Client, session: str
) -> None:
    turn = await client.start_turn(
        session, call("execute", command="(setsid sleep 63 &); sleep 64")
    )
    escaped = await anywhere("sleep 63", exact=True)  # out of the daemon's tree and group
    assert not escaped & await tree_with(client.process.pid, "sleep 64")
    await turn.cancel()
    assert (await within(turn.result(), 5))["stopReason"] == "cancelled"
    assert await all_gone(escaped) == []


async def test_100_mb_of_output_is_capped_head_and_tail(client: Client, session: str) -> None:
    command = "echo HEAD; head -c 100000000 /dev/zero | tr '\\0' x; echo; echo TAIL"
    reply, (result,) = await results(client, session, call("execute", command=command), 120)
    content = result["result"]["content"]
    assert content.startswith("HEAD\nxxx") and content.endswith("xxx\nTAIL\n")
    assert "bytes truncated ...]" in content
    assert len(content) < 100_000 + 100
    assert reply["stopReason"] == "end_turn"
    assert len(json.dumps(await within(client.context(session)))) < 200_000
    await still_works(client, session)


async def test_the_cap_is_a_setting(spawn: Any, env: dict[str, str]) -> None:
    client = await spawn(env={**env, "ELELEM_TOOL_OUTPUT_CAP": "1000"})
    session = (await within(client.new_session()))["sessionId"]
    _, (result,) = await results(client, session, call("execute", command="seq 100000"))
    content = result["result"]["content"]
    assert content.startswith("1\n2\n") and content.endswith("99999\n100000\n")
    dropped = len("".join(f"{i}\n" for i in range(1, 100001))) - 1000
    assert f"[... {dropped} bytes truncated ...]" in content


async def test_binary_and_non_utf8_output_is_text_with_replacements(
    client: Client, session: str
) -> None:
    command = "printf 'caf\\xe9 \\xff\\xfe \\x00 end\\n'; head -c 65536 /dev/urandom"
    reply, (result,) = await results(client, session, call("execute", command=command))
    content = result["result"]["content"]
    assert content.startswith("caf\ufffd \ufffd\ufffd \x00 end\n")
    assert result["ok"] is True and reply["stopReason"] == "end_turn"
    context = await within(client.context(session))
    assert json.loads(json.dumps(context)) == context
    await still_works(client, session)


async def test_a_process_that_ignores_sigterm_is_killed_on_timeout(
    client: Client, session: str
) -> None:
    command = 'trap "" TERM; sleep 71; echo never'
    started = asyncio.ensure_future(
        results(client, session, call("execute", command=command, timeout=1))
    )
    pids = await tree_with(client.process.pid, "sleep 71")
    _, (result,) = await within(started, 20)
    assert result["result"]["error"] == "timed out after 1s"
    assert "never" not in result["result"]["content"]
    assert await all_gone(pids) == []
