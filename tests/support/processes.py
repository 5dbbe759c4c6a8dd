"""Looking for processes a test started, by their exact command line."""

from __future__ import annotations

import os


def alive(argv: list[str]) -> bool:
    """Is a process with exactly this command line running (not a zombie)?"""
    wanted = [part.encode() for part in argv]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")[:-1]
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmd == wanted and state != "Z":
            return True
    return False
