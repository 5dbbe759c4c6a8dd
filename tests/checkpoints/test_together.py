"""Sessions and processes checkpointing the same folder at once take turns (one lock
per shadow repository: asyncio in a process, flock across them); none fails."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

from elelem_daemon.checkpoints import Checkpoints, Settings, for_cwd

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from elelem_daemon.checkpoints import for_cwd, close_all

    async def main():
        checkpoints = for_cwd(sys.argv[1])
        for turn in range(1, 9):
            saved = await checkpoints.begin("child", turn)
            assert saved.ok, saved
        await close_all()

    asyncio.run(main())
    """
)


async def test_sessions_of_one_process_share_the_folder(project: Path, settings: Settings) -> None:
    assert for_cwd(project, settings) is for_cwd(project, settings)
    (project / "f").write_text("x")

    async def session(name: str) -> list[bool]:
        checkpoints = for_cwd(project, settings)
        return [(await checkpoints.begin(name, turn)).ok for turn in range(1, 6)]

    results = await asyncio.gather(*(session(f"s{i}") for i in range(3)))
    assert all(all(r) for r in results)


async def test_two_processes_take_turns(project: Path, settings: Settings) -> None:
    (project / "f").write_text("x")
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, str(project), env=os.environ
    )
    checkpoints = Checkpoints(project, settings)
    for turn in range(1, 9):
        (project / "f").write_text(str(turn))
        saved = await checkpoints.begin("parent", turn)
        assert saved.ok, saved
    assert await asyncio.wait_for(child.wait(), 120) == 0
    assert len(await checkpoints.list("child")) == 8
    assert len(await checkpoints.list("parent")) == 8
