"""Lock: one writer at a time on a shadow repository, in this process and across them.

An asyncio lock orders the sessions of this process; an `flock` on `<shadow>/lock`
orders elelem processes working in the same folder. The flock is asked for without
blocking, every few milliseconds, so waiting never holds up the event loop; the
kernel drops it if the process dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

from ..safety import owned
from .git import GitError

POLL = 0.02
_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def local(path: Path) -> asyncio.Lock:
    table = _locks.setdefault(asyncio.get_running_loop(), {})
    return table.setdefault(str(path), asyncio.Lock())


@contextlib.asynccontextmanager
async def held(path: Path, timeout: float) -> AsyncIterator[None]:
    """Hold the lock file `path` (created if needed); GitError `busy` after `timeout`."""
    deadline = time.monotonic() + timeout
    try:  # asyncio.timeout, not wait_for: 3.11's wait_for can lose a cancel
        async with asyncio.timeout(timeout):
            await local(path).acquire()
    except TimeoutError:
        raise GitError(
            f"checkpoints of this folder stayed busy for {timeout:g} s", "busy"
        ) from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = owned.open_owned(path, os.O_RDWR | os.O_CREAT)  # never a planted link
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise GitError(
                            f"another elelem process kept this folder's checkpoints busy "
                            f"for {timeout:g} s",
                            "busy",
                        ) from None
                    await asyncio.sleep(POLL)
            yield
        finally:
            os.close(fd)  # releases the flock
    finally:
        local(path).release()
