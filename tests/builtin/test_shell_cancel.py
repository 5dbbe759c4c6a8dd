"""A turn cancelled while its command is still starting must not leave the command running."""

from __future__ import annotations

import asyncio

from support.processes import alive

from elelem_daemon.builtins.shell import run


async def test_cancelling_at_every_step_of_the_start_kills_the_group(tmp_path) -> None:
    sleeper = ["sleep", "43.5"]  # a command line no other test uses
    for steps in range(12):  # cancel after 0, 1, 2, ... loop iterations: some land mid-start
        task = asyncio.create_task(run(["bash", "-c", "sleep 43.5 && echo never"], tmp_path))
        for _ in range(steps):
            await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
    for _ in range(20):
        if not alive(sleeper):
            break
        await asyncio.sleep(0.1)
    assert not alive(sleeper)
