"""Writer: appends records to one session file, locked, synced off the event loop
(store.py says what it promises)."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
from pathlib import Path

from ..base.errors import SessionLocked
from ..safety.owned import open_owned
from . import records
from .records import Record

log = logging.getLogger(__name__)


def fingerprint(info: os.stat_result) -> tuple[int, ...]:
    """Which file, at which length and modification: equal fingerprints mean the bytes
    read then are the bytes there now (the file is only ever appended to or cut)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class Writer:
    """Appends records to one session file: one write per call, synced off the loop."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._syncing: asyncio.Future[None] | None = None  # the sync a thread runs now
        self._dirty = False  # written since that sync began: one more is due

    def open(self) -> Writer:
        """Create (or reopen) and lock the file; cut a torn last line left by a crash."""
        if self._fd is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        fd = open_owned(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionLocked(
                f"session {self.path.stem} is already open in an elelem process"
            ) from None
        self._fd = fd
        self._cut_torn_tail()
        if created:
            _fsync_dir(self.path.parent)
        return self

    def _cut_torn_tail(self) -> None:
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size == 0 or os.pread(self._fd, 1, size - 1) == b"\n":
            return
        keep = size
        while keep > 0:
            chunk = os.pread(self._fd, min(4096, keep), max(0, keep - 4096))
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                keep = keep - len(chunk) + newline + 1
                break
            keep -= len(chunk)
        os.ftruncate(self._fd, keep)
        os.fsync(self._fd)

    def append(self, *lines: Record) -> None:
        """Write the records in one write; sync them off the loop (`sync_soon`)."""
        if not lines:
            return
        self.open()
        assert self._fd is not None
        view = memoryview(b"".join(records.encode(record) for record in lines))
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self.sync_soon()

    def sync_soon(self) -> None:
        """Sync what was written: in a worker thread, started when the running task
        next waits (so a request handed over right after a write goes out first); at
        most one at a time, and one more after it when more was written meanwhile.
        Without a running loop, now."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            if self._fd is not None:
                os.fsync(self._fd)
            return
        if self._syncing is not None:
            self._dirty = True
            return
        self._syncing = loop.create_future()
        loop.call_soon(self._start_sync, loop)

    def _start_sync(self, loop: asyncio.AbstractEventLoop) -> None:
        self._dirty = False
        try:
            done = loop.run_in_executor(None, _fsync_path, self.path)
        except RuntimeError:  # the loop is ending (its executor shut down): sync here
            _fsync_path(self.path)
            self._synced(loop)
            return
        done.add_done_callback(lambda _: self._synced(loop))

    def _synced(self, loop: asyncio.AbstractEventLoop) -> None:
        finished, self._syncing = self._syncing, None
        if finished is not None and not finished.done():
            finished.set_result(None)
        if self._dirty and not loop.is_closed():
            self.sync_soon()

    async def synced(self) -> None:
        """Wait until what was written so far is synced (tests, and a clean close)."""
        while self._syncing is not None:
            await asyncio.shield(self._syncing)

    def fingerprint(self) -> tuple[int, ...]:
        """The open file's `fingerprint` (what `Store.load` marks a session read with)."""
        assert self._fd is not None
        return fingerprint(os.fstat(self._fd))

    def close(self) -> None:
        """Unlock and close; what was written and not yet synced is synced once more,
        off the loop where there is one (by path: the lock is free at once), else here."""
        pending = self._fd is not None and (self._syncing is not None or self._dirty)
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None
        if not pending:
            return
        self._dirty = False
        try:
            asyncio.get_running_loop().run_in_executor(None, _fsync_path, self.path)
        except RuntimeError:  # no loop, or one whose executor shut down
            _fsync_path(self.path)


def _fsync_path(path: Path) -> None:
    """fsync a session file through a descriptor of its own (syncing flushes the file,
    whichever descriptor asks; this one holds no lock, so closing the writer meanwhile
    frees the session at once). A file gone meanwhile (deleted) has nothing to sync."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        log.warning("store: %s not synced: %s", path, exc)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
