"""Process trees, read from /proc: what a tool started, so that none of it outlives it.

A tool's command runs in its own process group; a grandchild that leaves the group
(`setsid`) is still found here as long as its parent lives, because it is looked up
by parentage before anything is killed, and after that as long as it holds the
command's output pipe (`holders`, asked while the daemon's end of it is still open,
so the pipe's name cannot belong to anything else).
"""

from __future__ import annotations

import os


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
