"""initialize, shutdown and exit, end of input, the processId watch, a clean stdout."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import pytest

from elelem_daemon import __version__
from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import cmdline, descendants, running, within

pytestmark = pytest.mark.e2e


async def test_initialize_names_the_server_and_its_capabilities(spawn) -> None:
    client = await spawn()
    result = await within(client.initialize(client_info={"name": "test", "version": "1"}))
    assert result["serverInfo"] == {"name": "elelem", "version": __version__}
    assert "stub" in result["capabilities"]["providers"]
    assert result["capabilities"]["cancel"] is True
    assert result["capabilities"]["inputAsk"] is True


async def test_requests_work_without_initialize(spawn) -> None:
    client = await spawn()
    session = (await within(client.new_session()))["sessionId"]
    assert (await within(client.turn(session, "!echo hi")))["reply"] == "hi"


async def test_shutdown_then_exit_ends_with_code_0(client: Client, session: str) -> None:
    running_turn = await client.start_turn(session, "!stream 1000 10")
    assert await within(client.request("shutdown")) is None
    assert (await within(running_turn.result()))["stopReason"] == "cancelled"
    with pytest.raises(RpcError) as error:
        await within(client.list_sessions())
    assert (error.value.code, error.value.kind) == (-32600, "shutting_down")
    await client.notify("exit")
    assert await within(client.process.wait(), 2) == 0


async def test_exit_without_shutdown_ends_with_code_1(client: Client) -> None:
    await client.notify("exit")
    assert await within(client.process.wait(), 10) == 1  # a bound on waiting, generous under load


async def test_end_of_input_ends_the_daemon_within_a_second(client: Client, session: str) -> None:
    await within(client.turn(session, "!echo hi"))
    started = time.monotonic()
    assert client.process.stdin is not None
    client.process.stdin.close()
    assert await within(client.process.wait(), 5) == 0
    assert time.monotonic() - started < 1.0


async def test_end_of_input_during_a_tool_leaves_no_child_behind(
    client: Client, session: str
) -> None:
    turn = await client.start_turn(session, '!tool execute {"command": "sleep 30"}')
    async for event in turn.events():
        if event["method"] == "event/doing":
            break
    for _ in range(200):
        pids = descendants(client.process.pid)
        if any(cmdline(pid).startswith("sleep 30") for pid in pids):
            break
        await asyncio.sleep(0.02)
    assert pids
    started = time.monotonic()
    assert client.process.stdin is not None
    client.process.stdin.close()
    await within(client.process.wait(), 5)
    assert time.monotonic() - started < 1.0
    assert not [pid for pid in pids if running(pid)]


async def test_sigterm_also_kills_the_tools(client: Client, session: str) -> None:
    turn = await client.start_turn(session, '!tool execute {"command": "sleep 30"}')
    async for event in turn.events():
        if event["method"] == "event/doing":
            break
    for _ in range(200):
        pids = descendants(client.process.pid)
        if any(cmdline(pid).startswith("sleep 30") for pid in pids):
            break
        await asyncio.sleep(0.02)
    client.process.send_signal(signal.SIGTERM)
    assert await within(client.process.wait(), 5) == 128 + signal.SIGTERM
    assert not [pid for pid in pids if running(pid)]


async def test_the_daemon_exits_when_the_client_process_is_gone(spawn) -> None:
    parent = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(60)"
    )
    client = await spawn()
    await within(client.initialize(process_id=parent.pid))
    await within(client.list_sessions())
    await asyncio.sleep(1.2)
    assert client.process.returncode is None  # still watching a live process
    parent.kill()
    await parent.wait()
    assert await within(client.process.wait(), 5) == 0


async def test_a_zombie_client_counts_as_gone(spawn) -> None:
    # the daemon reads /proc: a client that died but was not reaped is gone too
    parent = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    for _ in range(100):
        if not running(parent.pid):
            break
        await asyncio.sleep(0.05)
    client = await spawn()
    await within(client.initialize(process_id=parent.pid))
    assert await within(client.process.wait(), 5) == 0
    await parent.wait()


async def test_stdout_carries_only_protocol_messages(spawn, workdir: Path) -> None:
    plugins = workdir / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "noisy.py").write_text(
        "print('noise at import')\n"
        "def register(plugin):\n"
        "    @plugin.command('noise', 'prints')\n"
        "    def noise(session, args):\n"
        "        print('noise in a command')\n"
        "        import os, subprocess\n"
        "        os.system('echo noise from a child')\n"
        "        subprocess.run(['echo', 'noise from another'])\n"
        "        session.output.say('said')\n"
    )
    client = await spawn(stderr=asyncio.subprocess.DEVNULL)
    await within(client.initialize())
    session = (await within(client.new_session(trusted=True)))["sessionId"]
    assert (await within(client.command(session, "/noise")))["output"] == "said"
    # every byte the client read parsed as a frame: anything else would be a BadFrame
    assert client.bad_frames == []


async def test_the_daemon_exits_when_its_stdout_is_closed(client: Client) -> None:
    pipe = client.process._transport.get_pipe_transport(1)  # type: ignore[attr-defined]
    pipe.close()
    await client.notify("session/list")  # a notification: nothing to answer
    await client.send({"jsonrpc": "2.0", "id": 1, "method": "session/list"})
    assert await within(client.process.wait(), 5) == 0
