"""Cancellation: session/cancel and $/cancelRequest end a turn promptly, and kill its tool."""

from __future__ import annotations

import asyncio
import time

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import cmdline, descendants, running, within

pytestmark = pytest.mark.e2e
SLEEP = '!tool execute {"command": "sleep 30"}'


async def _tool_started(client: Client, session: str) -> tuple[object, set[int]]:
    """Start the sleep-30 turn; return it once `sleep` runs, with the tool's pids."""
    turn = await client.start_turn(session, SLEEP)
    async for event in turn.events():
        if event["method"] == "event/doing":
            break
    pids: set[int] = set()
    for _ in range(200):
        pids = descendants(client.process.pid)
        if any(cmdline(pid).startswith("sleep 30") for pid in pids):
            return turn, pids
        await asyncio.sleep(0.02)
    raise AssertionError(f"no sleep process among {[cmdline(p) for p in pids]}")


@pytest.mark.parametrize("how", ["session/cancel", "$/cancelRequest"])
async def test_cancel_ends_a_running_tool_turn_within_a_second(
    client: Client, session: str, how: str
) -> None:
    turn, pids = await _tool_started(client, session)
    started = time.monotonic()
    if how == "session/cancel":
        await turn.cancel()
    else:
        await turn.cancel_request()
    result = await within(turn.result())
    assert time.monotonic() - started < 1.0
    assert result["stopReason"] == "cancelled"
    assert result["reply"] == "let me check.[cancelled]"
    assert result["turnId"] == 1
    assert not [pid for pid in pids if running(pid)]  # the sleep is gone


async def test_a_cancelled_turn_keeps_its_prompt_and_partial_reply(
    client: Client, session: str
) -> None:
    turn = await client.start_turn(session, "!stream 1000 10")
    async for event in turn.events():
        if event["method"] == "event/saying":
            await turn.cancel()
            break
    result = await within(turn.result())
    assert result["stopReason"] == "cancelled"
    assert result["reply"].startswith("tok0 ") and result["reply"].endswith("[cancelled]")
    messages = await within(client.context(session))
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]
    assert messages[1]["content"] == "!stream 1000 10"
    assert messages[2]["content"] == result["reply"]
    after = await within(client.turn(session, "!echo again"))  # no longer busy
    assert after == {"reply": "again", "stopReason": "end_turn", "turnId": 2}


async def test_cancelling_an_idle_or_unknown_session_is_harmless(
    client: Client, session: str
) -> None:
    await client.cancel(session)
    await client.cancel("no-such-session")
    await client.notify("session/cancel", {"sessionId": 5})
    await client.notify("$/cancelRequest", {"id": 999})
    await client.notify("$/cancelRequest", {})
    assert (await within(client.turn(session, "!echo fine")))["reply"] == "fine"


async def test_closing_a_session_cancels_its_turn(client: Client, session: str) -> None:
    turn, pids = await _tool_started(client, session)
    await within(client.close_session(session))
    assert (await within(turn.result()))["stopReason"] == "cancelled"
    assert not [pid for pid in pids if running(pid)]
    with pytest.raises(RpcError) as error:
        await within(client.turn(session, "!echo hi"))
    assert error.value.kind == "unknown_session"


async def test_a_tool_that_ignores_sigterm_is_killed_and_eof_still_exits_in_a_second(
    client: Client, session: str
) -> None:
    turn = await client.start_turn(
        session, '!tool execute {"command": "trap \\"\\" TERM; sleep 30; echo never"}'
    )
    async for event in turn.events():
        if event["method"] == "event/doing":
            break
    pids: set[int] = set()
    for _ in range(200):
        pids = descendants(client.process.pid)
        if any(cmdline(pid).startswith("sleep 30") for pid in pids):
            break
        await asyncio.sleep(0.02)
    assert any(cmdline(pid).startswith("sleep 30") for pid in pids)
    started = time.monotonic()
    assert client.process.stdin is not None
    client.process.stdin.close()
    assert await within(client.process.wait(), 5) == 0
    assert time.monotonic() - started < 1.0
    assert not [pid for pid in pids if running(pid)]
