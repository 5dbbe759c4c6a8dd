"""Each error code, with its data.kind; the daemon keeps answering after every one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


async def fails(awaitable) -> RpcError:
    with pytest.raises(RpcError) as error:
        await within(awaitable)
    return error.value


async def test_parse_error(client: Client) -> None:
    await client.write_raw(b'Content-Length: 9\r\n\r\n{"json":1')
    error = await within(client.errors.get())
    assert (error.code, error.kind) == (-32700, "parse_error")
    assert await within(client.list_sessions()) == []


async def test_invalid_request(client: Client) -> None:
    error = await fails(client.send_as_is({"jsonrpc": "1.0", "id": 7, "method": "session/list"}))
    assert (error.code, error.kind) == (-32600, "invalid_request")
    assert "jsonrpc" in error.message


async def test_method_not_found(client: Client) -> None:
    error = await fails(client.request("session/nope", {}))
    assert (error.code, error.kind) == (-32601, "method_not_found")
    assert "session/nope" in error.message


async def test_invalid_params_lists_every_problem(client: Client) -> None:
    error = await fails(client.request("session/turn", {"sessionId": 5, "text": ["x"]}))
    assert (error.code, error.kind) == (-32602, "invalid_params")
    assert error.data["errors"] == [
        "sessionId: expected a string, got an integer",
        "text: expected a string, got an array",
    ]
    missing = await fails(client.request("session/turn", {}))
    assert missing.data["errors"] == ["sessionId: required", "text: required"]
    positional = await fails(client.request("session/list", [1, 2]))
    assert positional.kind == "invalid_params"
    boolean = await fails(client.request("initialize", {"processId": True}))
    assert boolean.data["errors"] == ["processId: expected an integer, got a boolean"]
    cwd = await fails(client.new_session(cwd="/no/such/dir"))
    assert (cwd.kind, cwd.data["errors"]) == (
        "invalid_params",
        ["cwd: not a directory: /no/such/dir"],
    )


async def test_unknown_session(client: Client) -> None:
    for method in (
        "session/turn",
        "session/command",
        "session/context",
        "session/close",
        "session/complete",
        "session/trust",
    ):
        params = {"sessionId": "nope", "text": "hi", "line": "/help"}
        error = await fails(client.request(method, params))
        assert (error.code, error.kind) == (-32002, "unknown_session")
        assert error.data["sessionId"] == "nope"


async def test_unknown_provider(client: Client) -> None:
    error = await fails(client.new_session(provider="nosuch"))
    assert (error.code, error.kind) == (-32602, "unknown_provider")
    assert 'unknown provider: "nosuch"' in error.message


async def test_session_busy(client: Client, session: str) -> None:
    turn = await client.start_turn(session, "!stream 1000 10")
    for attempt in (client.turn(session, "!echo hi"), client.command(session, "/context")):
        error = await fails(attempt)
        assert (error.code, error.kind) == (-32001, "session_busy")
    await turn.cancel()
    assert (await within(turn.result()))["stopReason"] == "cancelled"


@pytest.fixture
def slow_command(workdir: Path) -> None:
    plugins = workdir / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "slow.py").write_text(
        "import asyncio\n"
        "def register(plugin):\n"
        "    @plugin.command('slow', 'Wait a long time')\n"
        "    async def slow(session, args):\n"
        "        await asyncio.sleep(30)\n"
    )


@pytest.mark.parametrize("how", ["$/cancelRequest", "session/cancel"])
async def test_request_cancelled(client: Client, slow_command: None, how: str) -> None:
    session = (await within(client.new_session(trusted=True)))["sessionId"]
    msg_id = 4242
    message = {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "session/command",
        "params": {"sessionId": session, "line": "/slow"},
    }
    pending = asyncio.ensure_future(client.send_as_is(message))
    for _ in range(100):  # wait until the command runs
        if (await within(client.list_sessions()))[0]["busy"]:
            break
    if how == "$/cancelRequest":
        await client.notify("$/cancelRequest", {"id": msg_id})
    else:
        await client.cancel(session)
    error = await fails(pending)
    assert (error.code, error.kind) == (-32800, "request_cancelled")
    assert (await within(client.command(session, "/help")))["output"]


async def test_internal_error(client: Client, workdir: Path) -> None:
    plugins = workdir / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "broken.py").write_text(
        "def register(plugin):\n"
        "    @plugin.setup\n"
        "    def explode(session):\n"
        "        raise RuntimeError('setup exploded')\n"
    )
    error = await fails(client.new_session(trusted=True))
    assert (error.code, error.kind) == (-32603, "internal_error")
    assert "setup exploded" in error.message
    assert "traceback" not in error.data
    assert (await within(client.new_session(trusted=False)))["sessionId"]


async def test_a_duplicate_request_id_in_flight_is_refused(client: Client, session: str) -> None:
    turn = await client.start_turn(session, "!stream 1000 10")
    error = await fails(
        client.send_as_is({"jsonrpc": "2.0", "id": turn.id, "method": "session/list"})
    )
    assert (error.code, error.kind) == (-32600, "invalid_request")
    assert "already in use" in error.message
    await turn.cancel()  # the error's id matched the turn's, so the client lost track of it:
    for _ in range(100):  # ask the daemon instead
        if not (await within(client.list_sessions()))[0]["busy"]:
            break
    assert (await within(client.turn(session, "!echo after")))["reply"] == "after"
