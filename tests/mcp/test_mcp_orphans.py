"""A stdio server dies with the process that owns its session, however that dies: also
on SIGKILL, when no code of ours runs any more. The server's own child too (the
server's process group is watched by the reaper, as `execute`'s are). And a cancel of
whatever stops a server goes on, with the server's process gone first."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from mcp_support import (  # noqa: F401 (fixtures)
    SERVERS,
    allow_mcp,
    configure,
    marks,
    project,
    quick_retries,
    sessions,
    stdio,
    until,
)

from elelem_daemon.mcp.config import ServerConfig
from elelem_daemon.mcp.process import ServerProcess

OWNER = """
import asyncio, json, sys
from pathlib import Path
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

async def main():
    session = start(core_registry(entry_points=False), "stub", cwd=Path(sys.argv[1]))
    assert await session.mcp.ready(120), session.mcp.status()
    result = await session.toolbox.run("demo__spawn", {})
    server = session.mcp.status()["servers"][0]["pid"]
    print(json.dumps({"server": server, "child": int(result.payload["content"])}), flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def test_sigkill_of_the_owner_leaves_no_server_behind(project: Path, marks: Path) -> None:
    allow_mcp()
    configure(project, {"demo": stdio()})
    owner = await asyncio.create_subprocess_exec(
        sys.executable, "-c", OWNER, str(project), stdout=asyncio.subprocess.PIPE
    )
    assert owner.stdout is not None
    pids: dict[str, int] = {}
    try:
        line = await asyncio.wait_for(owner.stdout.readline(), 180)
        pids = json.loads(line)
        assert alive(pids["server"]) and alive(pids["child"])
        owner.send_signal(signal.SIGKILL)
        await owner.wait()
        # the server by its parent-death signal (or the end of its stdin), its child by
        # the reaper: both are branch trust-tools' (procs.tool_preexec, procs.reaper)
        await until(lambda: not alive(pids["server"]), 30)
        await until(lambda: not alive(pids["child"]), 30)
    finally:
        if owner.returncode is None:
            owner.kill()
            await owner.wait()
        for pid in pids.values():  # a failed run leaves nothing behind either
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


async def started(sessions, project: Path) -> tuple[object, int]:
    """A session whose server (hang.py) runs and never answers `initialize`; its pid."""
    session = await sessions(project, {"hang": stdio("hang.py")}, wait=False)
    server = session.mcp.servers["hang"]  # type: ignore[attr-defined]
    pid = await until(lambda: server.process is not None and server.process.pid, 60)
    return session, pid


async def test_a_cancel_of_the_closer_goes_on_and_the_server_is_gone(
    sessions, project: Path
) -> None:
    allow_mcp()
    session, pid = await started(sessions, project)
    server = session.mcp.servers["hang"]  # type: ignore[attr-defined]
    assert alive(pid)
    # hang.py outlives its stdin: the stop waits (EXIT_GRACE) while the closer is cancelled
    closer = asyncio.ensure_future(server.aclose())
    await asyncio.sleep(0)  # one step: the closer waits for the server's task to end
    assert server._closing and server._task is None and not closer.done()
    closer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closer
    assert not alive(pid)  # killed before the cancel went on, not some time later
    assert server.state == "stopped"


async def test_a_cancel_of_a_process_stop_goes_on_and_the_process_is_gone(
    sessions, project: Path
) -> None:
    allow_mcp()
    session, pid = await started(sessions, project)
    process = session.mcp.servers["hang"].process  # type: ignore[attr-defined]
    stopping = asyncio.ensure_future(process.stop())
    await asyncio.sleep(0)  # one step: stdin closed, the stop waits out its grace
    assert process.process.stdin.is_closing() and not stopping.done()
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    await until(lambda: not alive(pid), 15)  # SIGKILLed: no reaping awaited after a cancel
    assert process.lost.is_set() and process._log is None and process._tasks == []


async def test_a_cancel_while_the_stop_waits_for_the_pipes_goes_on(project: Path) -> None:
    """The server process alone (no session's link around it: the link stops a server
    it sees die too, and a second stop would take the pipes' tasks from this one)."""
    process = ServerProcess(
        ServerConfig("hang", "stdio", sys.executable, (str(SERVERS / "hang.py"),)),
        project,
        project / "logs" / "hang.log",
    )
    await process.start()
    assert process.process is not None and process._log is not None
    pid = process.process.pid
    asked, release = asyncio.Event(), asyncio.Event()

    async def stubborn() -> None:  # a pipe's task slow to end once cancelled
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            asked.set()
            await release.wait()

    slow = asyncio.ensure_future(stubborn())
    process._tasks.append(slow)
    stopping = asyncio.ensure_future(process.stop())
    try:
        await asyncio.wait_for(asked.wait(), 60)  # the group is stopped: the pipes' turn
        assert not alive(pid) and not stopping.done()
        stopping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await stopping
        assert process.lost.is_set() and process._log is None
    finally:
        release.set()
        await slow
