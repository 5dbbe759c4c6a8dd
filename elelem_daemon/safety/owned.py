"""Owned files: those elelem keeps for itself (stored sessions, checkpoints, the
trusted-folders file), never opened through a link.

Each is opened with `O_NOFOLLOW` and must be a regular file with one link: a symlink,
a hard link (`st_nlink > 1`), a FIFO or a device planted where one of them should be
is an `OSError` saying so, never a way to write, truncate or append to another file,
nor to hang a read (a FIFO is opened non-blocking, then refused). Writes that replace
a file go to a new temporary file beside it, then `os.replace`, which replaces a
planted link itself and never what it points to.

A read (`read_owned`) gives the bytes with the fstat of the very fd they came from
(what a caller needs to know which file, of which size and time, it read), and can be
bounded (`limit`): a listing reads the first bytes of a file, never all of a huge one.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..base import regular

FLAGS = os.O_NOFOLLOW | regular.FLAGS


class NotOwned(OSError):
    """A path that is not a plain file of elelem's own: a link, a FIFO, a device."""


def open_owned(path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """An fd on path, which must be a regular file with a single link (not a symlink)."""
    return opened(path, flags, mode)[0]


def opened(
    path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o600
) -> tuple[int, os.stat_result]:
    """`open_owned`, with the fstat of that fd (which says it is a plain file): the
    shared non-blocking open (base/regular.py), never through a symlink, one link."""
    try:
        fd, info = regular.opened(path, flags, mode, follow=False)
    except regular.NotRegular as exc:
        raise NotOwned(str(exc)) from None
    if info.st_nlink > 1:
        os.close(fd)
        raise NotOwned(f"{path} has {info.st_nlink} hard links: not opened")
    return fd, info


def read_owned(path: Path | str, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of path and the fstat of the fd they were read from (taken before the
    read: `store.fingerprint` of it tells whether the file changed since). With `limit`,
    only the first `limit` bytes, and none past the size that fstat gave."""
    fd, info = opened(path)
    try:
        if limit is None:
            with open(fd, "rb", buffering=0, closefd=False) as file:
                return file.read(), info
        return regular.read_fd(fd, min(limit, info.st_size)), info
    finally:
        os.close(fd)


def read_bytes(path: Path | str) -> bytes:
    return read_owned(path)[0]


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
