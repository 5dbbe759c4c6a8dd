"""Regular: the one way a file that a repository or a command controls is read.

A project's `.git/HEAD` (or where a `.git` file's `gitdir:` points), its rules files,
skills, modes, plugins, `.gitignore`, `.mcp.json`, the trusted-folders list: any of
them can be a FIFO (tar and zip archives carry them), a device or a huge file. A plain
`open()` of a FIFO waits for a writer for ever, on whichever thread opened it (the
event loop, in a face: the whole process then stops answering, signals included).

So every such read opens the path non-blocking (`O_NONBLOCK`: opening a FIFO returns
at once), checks with `fstat` of that very fd that it is a regular file (a FIFO, a
socket, a device or a folder is `NotRegular`, never read), and reads at most `limit`
bytes. `follow=False` adds `O_NOFOLLOW` (elelem's own files: safety/owned.py); a
project's files may be symlinks (`CLAUDE.md -> AGENTS.md`), and what a symlink points
to is checked the same way.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

FLAGS = os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


class NotRegular(OSError):
    """A path that is not a regular file (a FIFO, a device, a socket, a folder), or a
    symlink where none is followed: not opened, or closed before any read."""


def opened(
    path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o600, follow: bool = True
) -> tuple[int, os.stat_result]:
    """A blocking fd on path, which must be a regular file, with its fstat. Never
    waits on the path (a FIFO with no writer is refused at once)."""
    extra = FLAGS if follow else FLAGS | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags | extra, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
            raise NotRegular(f"{path} is a symlink or not a regular file: not opened") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{path} is not a regular file: not opened")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_fd(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from fd, from where it stands."""
    chunks = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read(path: Path | str, limit: int, follow: bool = True) -> bytes:
    """The first `limit` bytes of a regular file (pass `limit + 1` to tell a file past
    the bound); OSError (NotRegular) for anything else."""
    fd, _info = opened(path, follow=follow)
    try:
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def text(path: Path | str, limit: int, follow: bool = True) -> str:
    """`read`, as UTF-8 (undecodable bytes replaced)."""
    return read(path, limit, follow).decode("utf-8", "replace")


def lines(path: Path | str, limit: int) -> list[str]:
    """The lines of a regular file's first `limit` bytes, those holding a NUL dropped;
    none when it is missing, unreadable or not a regular file."""
    try:
        data = text(path, limit)
    except OSError:
        return []
    return [line for line in data.splitlines() if "\0" not in line]
