"""Store: sessions kept on disk, one append-only JSON Lines file per session.

Where: `$ELELEM_STATE_DIR/sessions/`, else `$XDG_STATE_HOME/elelem/sessions/`, else
`~/.local/state/elelem/sessions/`; the file is `<sessionId>.jsonl`, its lines are in
records.py. The file is written when the first message is kept, so a session nobody
talked to leaves no file, unless the face stores it at once (`Recorder.start`: the ACP
face, whose clients keep a session's id to load it later). Every record is written to
the file (one `write`) as it is kept, and synced to the disk right after, off the event
loop: a worker thread `fsync`s the file once the running task next waits, so a turn
never waits for the disk before its request goes out (write, then send, then sync).
What this promises: a record is in the file (and read back by any process) as soon as
it is kept; a crash of the process loses nothing written; a crash of the machine before
the sync can lose the records written since the last one, at most the turn in flight
and so at most that turn's prompt record (`session/load` then finds a session whose last
turn never began, or one ending on a prompt with no reply, which it marks
`[interrupted]`, as after any crash mid-turn). Outside an event loop (a script, a
test) each append is synced before it returns. A half-written last line is cut off
before the next append.
While a process holds a session open, the file is locked (flock) so no second process
appends to it. A loaded session carries the `fingerprint` of the file it was read
from (`Stored.read_as`): once the lock is taken, the file is read again only if it
changed since (recorder.record), so a resumed session is read once.

A listing reads each file's first HEAD_READ bytes, in one `read`: they hold the
metadata line of any session elelem writes. Only a first line past them, or an
untitled session whose first prompt is not in them, reads more, never past HEAD_LINE
bytes of metadata line and HEAD_SCAN bytes after it: a file whose first line is longer
is not listed (skipped with a warning, as is one that is no metadata).

Session files are elelem's own (owned.py): opened with `O_NOFOLLOW`, only as regular
files with one link. A symlink, hard link or FIFO planted as `<id>.jsonl` is skipped by
listings and refused by `load`; `delete` removes such a name itself, never opening
(or truncating) what it points to.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path

from ..base.config import state_dir
from ..base.errors import NoStoredSession
from ..safety.owned import open_owned, read_owned
from . import records
from .records import Stored
from .writer import Writer, _fsync_dir, fingerprint

log = logging.getLogger(__name__)

SUFFIX = ".jsonl"
HEAD_SCAN = 64 * 1024  # bytes read past the metadata of an untitled session, for its title
HEAD_LINE = 64 * 1024  # bytes of the metadata line at most (elelem writes a few hundred)
HEAD_READ = 8 * 1024  # bytes a listing reads first: the metadata line, and often the title
VALID_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def sessions_dir() -> Path:
    """The folder of stored sessions, from the environment (read on every call)."""
    return state_dir() / "sessions"


def _stamp(mtime: float) -> str:
    stamp = datetime.fromtimestamp(mtime, UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Store:
    """The folder of stored sessions: list, load, delete, and writers for appending."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else sessions_dir()

    def path(self, session_id: str) -> Path:
        if not isinstance(session_id, str) or not VALID_ID.fullmatch(session_id):
            raise NoStoredSession(f"invalid session id: {session_id!r}")
        return self.root / f"{session_id}{SUFFIX}"

    def list(self, cwd: Path | str | None = None) -> list[Stored]:
        """Stored sessions, most recently updated first; only those in `cwd` if given."""
        where = str(Path(cwd).resolve()) if cwd is not None else None
        found = []
        try:
            with os.scandir(self.root) as entries:  # one pass, in the folder's order
                names = [e.name for e in entries if e.name.endswith(SUFFIX)]
        except OSError as exc:  # no folder yet (nothing stored), or one we may not read
            if not isinstance(exc, FileNotFoundError | NotADirectoryError):
                log.warning("store: %s not listed: %s", self.root, exc)
            names = []
        for name in names:
            path = self.root / name
            try:
                stored = self._head(path)
            except (OSError, ValueError) as exc:
                log.warning("store: %s skipped: %s", path, exc)
                continue
            if where is None or stored.cwd == where:
                found.append(stored)
        return sorted(found, key=lambda s: (s.updated, s.created), reverse=True)

    def _head(self, path: Path) -> Stored:
        """The metadata, from the first line (at most HEAD_LINE bytes); for a session
        stored before its first prompt, also from the lines up to that prompt (at most
        HEAD_SCAN bytes past the first line), which give the title.

        The first HEAD_READ bytes are read, which hold the first line of any session
        elelem writes, and often an untitled session's first prompt; the file is read
        again, up to those bounds, only when they do not."""
        data, info = read_owned(path, HEAD_READ)  # never through a link
        whole = len(data) >= info.st_size
        end = data.find(b"\n")
        if end >= 0:
            head = _head_of(data, end, path, info)
            if whole or head.title or b'"title":""' not in data[:end]:
                return head
        if not whole:
            data, info = read_owned(path, HEAD_LINE + HEAD_SCAN)
            end = data.find(b"\n")
        if end < 0 and len(data) < HEAD_LINE:
            raise ValueError("no complete metadata line")
        if end < 0 or end >= HEAD_LINE:
            raise ValueError(f"metadata line longer than {HEAD_LINE} bytes")
        return _head_of(data, end, path, info)

    def head(self, session_id: str) -> Stored:
        """A stored session's metadata alone (NoStoredSession when there is none)."""
        path = self.path(session_id)
        try:
            return self._head(path)
        except FileNotFoundError:
            raise NoStoredSession(f"no stored session {session_id!r}") from None
        except (OSError, ValueError) as exc:
            raise NoStoredSession(f"stored session {session_id!r} is unreadable: {exc}") from None

    def load(self, session_id: str) -> Stored:
        """The whole stored session (NoStoredSession when there is none or it cannot
        be read); its `read_as` is the fingerprint of the file it was read from."""
        path = self.path(session_id)
        try:
            data, info = read_owned(path)  # never through a link; the fstat of those bytes
            stored = records.replay(records.parse_lines(data, path), path, _stamp(info.st_mtime))
            stored.read_as = fingerprint(info)
            return stored
        except FileNotFoundError:
            raise NoStoredSession(f"no stored session {session_id!r}") from None
        except (OSError, ValueError) as exc:  # a symlink or FIFO planted there, too
            raise NoStoredSession(f"stored session {session_id!r} is unreadable: {exc}") from None

    def find(self, prefix: str) -> str:
        """The id of the one stored session whose id starts with prefix."""
        if not prefix or not VALID_ID.fullmatch(prefix):
            raise NoStoredSession(f"invalid session id: {prefix!r}")
        if self.path(prefix).is_file():
            return prefix
        matches = sorted(p.stem for p in self.root.glob(f"{prefix}*{SUFFIX}"))
        if not matches:
            raise NoStoredSession(f"no stored session {prefix!r}")
        if len(matches) > 1:
            raise NoStoredSession(f"{prefix!r} is ambiguous: {', '.join(matches)}")
        return matches[0]

    def latest(self, cwd: Path | str) -> Stored | None:
        stored = self.list(cwd)
        return stored[0] if stored else None

    def delete(self, session_id: str) -> None:
        """Remove a stored session; not one that a process has open (SessionLocked)."""
        writer = self.writer(session_id)
        try:
            info = writer.path.lstat()
        except FileNotFoundError:
            raise NoStoredSession(f"no stored session {session_id!r}") from None
        if stat.S_ISDIR(info.st_mode):
            raise NoStoredSession(f"no stored session {session_id!r}")
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            writer.path.unlink()  # a planted link or FIFO: the name goes, what it names stays
            return
        writer.open()  # takes the lock, or raises SessionLocked
        try:
            writer.path.unlink()
        finally:
            writer.close()

    def writer(self, session_id: str) -> Writer:
        return Writer(self.path(session_id))

    def fork(self, session_id: str, new_id: str) -> None:
        """Store a copy of a stored session under `new_id`: the same records, its
        metadata line naming the new id, `created` now and `forkedFrom` the source.
        NoStoredSession when there is none (or it is unreadable); the copy is written
        whole to a new file (an existing one is never overwritten)."""
        path = self.path(session_id)
        try:
            data, _ = read_owned(path)  # never through a link
        except FileNotFoundError:
            raise NoStoredSession(f"no stored session {session_id!r}") from None
        except OSError as exc:
            raise NoStoredSession(f"stored session {session_id!r} is unreadable: {exc}") from None
        end = data.find(b"\n")
        try:
            head = records.loads(data[: end if end >= 0 else len(data)])
        except ValueError:
            head = None
        if not isinstance(head, dict) or head.get("type") != "session":
            raise NoStoredSession(f"stored session {session_id!r} has no metadata line")
        head = {**head, "id": new_id, "created": records.now(), "forkedFrom": session_id}
        rest = data[end + 1 :] if end >= 0 else b""
        target = self.path(new_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = open_owned(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            view = memoryview(records.encode(head) + rest)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_dir(target.parent)


def _head_of(data: bytes, end: int, path: Path, info: os.stat_result) -> Stored:
    """`records.head_of` the first bytes of a file, whose first line ends at `end`: the
    complete lines of the HEAD_SCAN bytes past it give an untitled session its title."""
    lines = [data[: end + 1]]
    if b'"title":""' in lines[0]:
        lines += data[end + 1 : end + 1 + HEAD_SCAN].split(b"\n")[:-1]
    return records.head_of(lines, path, _stamp(info.st_mtime))
