"""Process trees, read from /proc: what a tool started, so that none of it outlives it.

A tool's command runs in its own process group; a grandchild that leaves the group
(`setsid`) is still found here as long as its parent lives, because it is looked up
by parentage before anything is killed, and after that as long as it holds the
command's output pipe (`holders`, asked while the daemon's end of it is still open,
so the pipe's name cannot belong to anything else).

When the daemon dies (SIGKILL included), its tools die too: each tool process gets
`PR_SET_PDEATHSIG` and registers its own process group with the `reaper` before it
runs anything (both in `tool_preexec`, its pre-exec function); the reaper is a small
process of its own that kills the groups it was told of once the daemon's end of its
pipe closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any


def descendants(pid: int) -> set[int]:
    """The pids of a process's children, grandchildren, ... (empty off Linux)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def signal_all(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def pipe_of(fd: int) -> str | None:
    """The name /proc gives the pipe behind fd (`pipe:[INODE]`), None if it is not one."""
    try:
        return f"pipe:[{os.fstat(fd).st_ino}]"
    except (OSError, ValueError):
        return None


def holders(pipe: str | None) -> set[int]:
    """The other processes that have `pipe` open (e.g. a command's output): found even
    when they left the command's process group and were orphaned."""
    try:
        entries = os.listdir("/proc") if pipe else []
    except OSError:
        return set()
    me, found = os.getpid(), set()
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            names = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for name in names:
            try:
                if os.readlink(f"/proc/{entry}/fd/{name}") == pipe:
                    found.add(int(entry))
                    break
            except OSError:
                continue
    return found


# -- stopping a process tree -----------------------------------------------------------
GRACE = 0.5  # SIGTERM, then this long, then SIGKILL


def kill_group(process: asyncio.subprocess.Process, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def stop(
    process: asyncio.subprocess.Process, pipe: str | None = None, grace: float = GRACE
) -> None:
    """SIGTERM the process group and every descendant, then SIGKILL whatever is left
    after a grace period (descendants first looked up while their parents live, and
    whatever holds the command's output open)."""
    tree = descendants(process.pid) | holders(pipe)
    kill_group(process, signal.SIGTERM)
    signal_all(tree, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):  # asyncio.timeout: a cancel meanwhile goes on
        async with asyncio.timeout(grace):
            await asyncio.shield(process.wait())
    tree |= descendants(process.pid) | holders(pipe)
    kill_group(process, signal.SIGKILL)  # grandchildren may outlive the leader
    signal_all(tree, signal.SIGKILL)


# -- dying with the daemon ------------------------------------------------------------
PR_SET_PDEATHSIG = 1


def tool_preexec() -> Callable[[], None] | None:
    """A tool's pre-exec function, with two jobs: the process gets SIGKILL when the
    daemon's thread that forked it dies (call it on the event loop's thread), and its
    group is registered with the reaper; None off Linux.

    The death signal survives execve; its children do not inherit it (the reaper
    covers them). With the reaper started, the child registers its own group with it
    (`+PID`: a tool is started in a session of its own) before it runs anything, so a
    daemon killed before its `reaper.watch` still leaves no grandchild behind."""
    global _prctl
    if not sys.platform.startswith("linux"):
        return None
    if _prctl is None:
        import ctypes

        _prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl, parent = _prctl, os.getpid()
    told = reaper.fd if reaper.fd is not None and reaper.fd >= 0 else None

    def pre_exec() -> None:  # runs in the child between fork and exec: nothing else
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if told is not None:  # SIGPIPE is the default again here: a gone reaper's EPIPE
            kept = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPIPE})  # must not kill
            try:
                os.write(told, b"+%d\n" % os.getpid())
            except OSError:  # the reaper is gone, or behind: the parent's watch follows
                signal.sigtimedwait({signal.SIGPIPE}, 0)  # that EPIPE's signal, taken
            signal.pthread_sigmask(signal.SIG_SETMASK, kept)
        if os.getppid() != parent:  # the daemon died before prctl: die now
            os.kill(os.getpid(), signal.SIGKILL)

    return pre_exec


_prctl: Any = None


class Reaper:
    """One per daemon process, started with the first tool: `elelem_daemon/processes/reaper.py`,
    which kills every registered process group (and what its members started) when
    the daemon is gone, however it died. Registering is one non-blocking write."""

    def __init__(self) -> None:
        self.fd: int | None = None

    def start(self) -> None:
        if self.fd is not None:
            return
        script = os.path.join(os.path.dirname(__file__), "reaper.py")
        read, write = os.pipe()  # neither end is inherited by tools (close-on-exec)
        try:
            first = subprocess.Popen(  # sh exits at once: the reaper is orphaned
                [
                    "/bin/sh",
                    "-c",
                    'exec 3<&0; "$0" -I -S "$1" "$2" <&3 3<&- &',
                    sys.executable,
                    script,
                    str(os.getpid()),
                ],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            os.close(write)
            self.fd = -1  # no reaper (the death signal still covers direct children)
            return
        finally:
            os.close(read)
        os.set_blocking(write, False)
        self.fd = write
        threading.Thread(target=first.wait, name="elelem-reaper", daemon=True).start()

    def send(self, line: str) -> None:
        if self.fd is None:
            self.start()
        if self.fd is not None and self.fd >= 0:
            try:
                os.write(self.fd, line.encode())
            except OSError:  # the reaper is gone, or 64 KiB behind: nothing to wait for
                pass

    def watch(self, pgid: int) -> None:
        self.send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        self.send(f"-{pgid}\n")


reaper = Reaper()
