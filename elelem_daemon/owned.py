"""Owned files: those elelem keeps for itself (stored sessions, checkpoints, the
trusted-folders file), never opened through a link.

Each is opened with `O_NOFOLLOW` and must be a regular file with one link: a symlink,
a hard link (`st_nlink > 1`), a FIFO or a device planted where one of them should be
is an `OSError` saying so, never a way to write, truncate or append to another file,
nor to hang a read (a FIFO is opened non-blocking, then refused). Writes that replace
a file go to a new temporary file beside it, then `os.replace`, which replaces a
planted link itself and never what it points to.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


class NotOwned(OSError):
    """A path that is not a plain file of elelem's own: a link, a FIFO, a device."""


def open_owned(path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """An fd on path, which must be a regular file with a single link (not a symlink)."""
    try:
        fd = os.open(path, flags | FLAGS, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
            raise NotOwned(f"{path} is a symlink or not a regular file: not opened") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotOwned(f"{path} is not a regular file: not opened")
        if info.st_nlink > 1:
            raise NotOwned(f"{path} has {info.st_nlink} hard links: not opened")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: Path | str) -> bytes:
    with open(open_owned(path), "rb") as file:
        return file.read()


def read_text(path: Path | str) -> str:
    return read_bytes(path).decode("utf-8")


def read_line(path: Path | str) -> bytes:
    """The first line (with its newline, if it has one)."""
    with open(open_owned(path), "rb") as file:
        return file.readline()


def replace(path: Path | str, data: bytes, mode: int = 0o600) -> None:
    """Write path anew: a temporary file beside it (created, never followed), then
    `os.replace` over it."""
    path = Path(path)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        os.unlink(temp)  # a leftover of a process that died: ours to remove
    except FileNotFoundError:
        pass
    fd = os.open(temp, flags, mode)
    try:
        with open(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
