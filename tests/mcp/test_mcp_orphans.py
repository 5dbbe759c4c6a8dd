"""A stdio server dies with the process that owns its session, however that dies: also
on SIGKILL, when no code of ours runs any more. The server's own child too (the
server's process group is watched by the reaper, as `execute`'s are)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from mcp_support import (  # noqa: F401 (fixtures)
    allow_mcp,
    configure,
    marks,
    project,
    quick_retries,
    sessions,
    stdio,
    until,
)

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
        # the reaper: both are branch trust-tools' (procs.death_signal, procs.reaper)
        await until(lambda: not alive(pids["server"]), 30)
        await until(lambda: not alive(pids["child"]), 30)
    finally:
        if owner.returncode is None:
            owner.kill()
            await owner.wait()
        for pid in pids.values():  # a failed run leaves nothing behind either
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
