"""The reaper: kills what the daemon's tools left running once the daemon is gone.

Run as `python -I -S reaper.py DAEMON_PID` by `procs.Reaper` (standard library only;
the pid names it in `ps`), with a pipe from the daemon on stdin, started in the
background by a `/bin/sh` that exits at once: the reaper is no descendant of the
daemon (a tool's process tree never includes it). It reads lines `+PGID` (a tool's
process group started) and `-PGID` (it is over). At end of input (the daemon exited
or was killed, even by SIGKILL), it SIGKILLs every group still registered, with
every process those groups' members started (found by
parentage, also when they left the group with setsid), and exits.

`prctl(PR_SET_PDEATHSIG)` already kills a tool's direct child when the daemon dies;
this covers the grandchildren (`sleep 300 & sleep 300; wait`), which it does not.
"""

from __future__ import annotations

import os
import signal


def processes() -> tuple[dict[int, int], dict[int, list[int]]]:
    """pid -> process group, and ppid -> children, from /proc."""
    groups: dict[int, int] = {}
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return groups, children
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            ppid, pgrp = int(fields[1]), int(fields[2])
        except (OSError, IndexError, ValueError):
            continue
        groups[int(entry)] = pgrp
        children.setdefault(ppid, []).append(int(entry))
    return groups, children


def targets(registered: set[int]) -> set[int]:
    """Every member of the registered groups, and all their descendants."""
    groups, children = processes()
    found = {pid for pid, pgrp in groups.items() if pgrp in registered}
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    found.discard(os.getpid())
    return found


def kill(registered: set[int]) -> None:
    for _ in range(3):  # a member may fork while the first pass runs
        pids = targets(registered)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pgid in registered:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        if not pids:
            return


def serve(fd: int = 0) -> None:
    registered: set[int] = set()
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except InterruptedError:
            continue
        except OSError:
            chunk = b""
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            try:
                pgid = int(line[1:])
            except ValueError:
                continue
            if line[:1] == b"+":
                registered.add(pgid)
            elif line[:1] == b"-":
                registered.discard(pgid)
    kill(registered)


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # a terminal's signals are not the reaper's
    serve()
    os._exit(0)


if __name__ == "__main__":
    main()
