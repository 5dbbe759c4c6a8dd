"""The first messages, sent the instant the daemon starts (while pygls still loads, in a
thread): a good `initialize` and `session/new` are answered, anything else gets the
error it is due, and every answer is the same as at any other time."""

from __future__ import annotations

import asyncio
import signal

import pytest

from elelem_daemon import __version__
from elelem_daemon.jsonrpc.client import RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


async def test_a_first_initialize_then_a_turn(spawn) -> None:
    client = await spawn()
    result = await within(client.initialize(process_id=None))
    assert result["serverInfo"] == {"name": "elelem", "version": __version__}
    session = (await within(client.new_session()))["sessionId"]
    assert (await within(client.turn(session, "!echo hi")))["reply"] == "hi"


async def test_a_refused_first_initialize_gets_the_usual_error(spawn) -> None:
    client = await spawn()
    with pytest.raises(RpcError) as refused:
        await within(client.request("initialize", {"processId": True}))
    assert (refused.value.code, refused.value.kind) == (-32602, "invalid_params")
    assert refused.value.data["errors"] == ["processId: expected an integer, got a boolean"]
    assert "stub" in (await within(client.initialize()))["capabilities"]["providers"]


async def test_a_first_frame_that_is_not_json_gets_a_parse_error(spawn) -> None:
    client = await spawn()
    await client.write_raw(b'Content-Length: 9\r\n\r\n{"json":1')
    error = await within(client.errors.get())
    assert (error.code, error.kind) == (-32700, "parse_error")
    assert "stub" in (await within(client.initialize()))["capabilities"]["providers"]


async def test_a_first_initialize_notification_is_not_answered(spawn) -> None:
    client = await spawn()
    await client.notify("initialize", {})
    assert await within(client.list_sessions()) == []
    assert client.errors.empty()


async def test_an_early_session_new_fails_as_a_later_one_does(spawn, workdir) -> None:
    client = await spawn()
    await within(client.initialize())
    missing = str(workdir / "missing")
    with pytest.raises(RpcError) as early:  # sent while pygls loads
        await within(client.new_session(cwd=missing))
    assert await within(client.list_sessions()) == []  # the protocol's from here on
    with pytest.raises(RpcError) as late:
        await within(client.new_session(cwd=missing))
    assert (early.value.code, early.value.kind) == (-32602, "invalid_params")
    assert early.value.to_dict() == late.value.to_dict()
    assert (await within(client.new_session()))["sessionId"]


async def test_an_early_session_new_without_an_id_is_ignored(spawn) -> None:
    client = await spawn()
    await within(client.initialize())
    await client.notify("session/new", {})  # a request sent as a notification: no answer
    await client.notify("initialized", {})
    assert await within(client.list_sessions()) == []
    assert client.errors.empty()


async def test_a_turn_sent_with_the_first_session_waits_for_the_protocol(spawn) -> None:
    client = await spawn()
    await within(client.initialize())
    new = asyncio.ensure_future(client.new_session())
    turn = await client.start_turn("not-yet", "!echo hi")  # while session/new is handled
    with pytest.raises(RpcError) as unknown:
        await within(turn.result())
    assert unknown.value.kind == "unknown_session"
    session = (await within(new))["sessionId"]
    assert (await within(client.turn(session, "!echo hi")))["reply"] == "hi"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_after_the_first_session_ends_with_128_plus_n(spawn, signum) -> None:
    client = await spawn()
    await within(client.initialize())
    await within(client.new_session())
    client.process.send_signal(signum)
    assert await within(client.process.wait(), 5) == 128 + signum
