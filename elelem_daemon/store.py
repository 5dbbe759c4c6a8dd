"""Store: sessions kept on disk, one append-only JSON Lines file per session.

Where: `$ELELEM_STATE_DIR/sessions/`, else `$XDG_STATE_HOME/elelem/sessions/`, else
`~/.local/state/elelem/sessions/`; the file is `<sessionId>.jsonl`. Each line is one
JSON object with a `type`:

    {"type": "session", "version": 1, "id", "cwd", "provider", "model", "created", "title"}
    {"type": "message", "role", "content", "at"}     a kept message, as it was added (content:
                                                     a string, or text and image parts)
    {"type": "clear", "at"}                          /clear or /compact emptied the history
    {"type": "meta", "provider", "model", "at"}      the provider or model changed

The first line is the metadata; the file is written when the first message is kept, so
a session nobody talked to leaves no file. Every line is flushed and fsynced as it is
written; a half-written last line (the process died mid-write) is ignored on load and
cut off before the next append. While a process holds a session open, the file is
locked (flock) so no second process appends to it.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .config import state_dir
from .conversation import is_content
from .errors import SessionLocked, UnknownSession

log = logging.getLogger(__name__)
Message = dict[str, Any]

VERSION = 1
SUFFIX = ".jsonl"
VALID_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
TITLE_LENGTH = 80


def sessions_dir() -> Path:
    """The folder of stored sessions, from the environment (read on every call)."""
    return state_dir() / "sessions"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def title_of(text: str) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"


@dataclass
class Stored:
    """One stored session: its metadata and, once loaded, its kept messages."""

    id: str
    cwd: str
    provider: str
    model: str | None
    created: str
    title: str
    updated: str
    path: Path
    messages: list[Message] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The `session/list` entry."""
        return {
            "sessionId": self.id,
            "cwd": self.cwd,
            "title": self.title,
            "provider": self.provider,
            "model": self.model,
            "created": self.created,
            "updatedAt": self.updated,
            "stored": True,
        }


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The file's records; a torn last line is dropped, a corrupt middle line skipped."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    records = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
            if not isinstance(record, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            if number < len(lines):  # complete line, yet unreadable: say so, keep going
                log.warning("store: %s line %d skipped: %s", path, number, exc)
            continue
        records.append(record)
    return records


def replay(records: list[dict[str, Any]], path: Path, updated: str) -> Stored:
    """Fold the records into metadata and the kept messages."""
    head = records[0] if records else {}
    if not isinstance(head, dict) or head.get("type") != "session":
        raise ValueError(f"{path}: no session metadata")
    stored = Stored(
        path.stem,  # the file names the session, whatever a hand-edited header says
        str(head.get("cwd") or ""),
        str(head.get("provider") or "stub"),
        head.get("model"),
        str(head.get("created") or ""),
        str(head.get("title") or ""),
        updated,
        path,
    )
    for record in records[1:]:
        kind = record.get("type")
        if kind == "message" and record.get("role") in ("user", "assistant", "tool"):
            content = record.get("content", "")
            stored.messages.append(
                {"role": record["role"], "content": content if is_content(content) else ""}
            )
        elif kind == "clear":
            stored.messages.clear()
        elif kind == "meta":
            stored.provider = str(record.get("provider") or stored.provider)
            stored.model = record.get("model", stored.model)
    return stored


def _mtime(path: Path) -> str:
    stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Store:
    """The folder of stored sessions: list, load, delete, and writers for appending."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else sessions_dir()

    def path(self, session_id: str) -> Path:
        if not isinstance(session_id, str) or not VALID_ID.fullmatch(session_id):
            raise UnknownSession(f"invalid session id: {session_id!r}")
        return self.root / f"{session_id}{SUFFIX}"

    def list(self, cwd: Path | str | None = None) -> list[Stored]:
        """Stored sessions, most recently updated first; only those in `cwd` if given."""
        where = str(Path(cwd).resolve()) if cwd is not None else None
        found = []
        for path in self.root.glob(f"*{SUFFIX}") if self.root.is_dir() else []:
            try:
                stored = self._head(path)
            except (OSError, ValueError) as exc:
                log.warning("store: %s skipped: %s", path, exc)
                continue
            if where is None or stored.cwd == where:
                found.append(stored)
        return sorted(found, key=lambda s: (s.updated, s.created), reverse=True)

    def _head(self, path: Path) -> Stored:
        with path.open("rb") as file:
            first = file.readline()
        if not first.endswith(b"\n"):
            raise ValueError("no complete metadata line")
        return replay([json.loads(first)], path, _mtime(path))

    def load(self, session_id: str) -> Stored:
        path = self.path(session_id)
        try:
            return replay(read_lines(path), path, _mtime(path))
        except FileNotFoundError:
            raise UnknownSession(f"no stored session {session_id!r}") from None
        except ValueError as exc:
            raise UnknownSession(f"stored session {session_id!r} is unreadable: {exc}") from None

    def find(self, prefix: str) -> str:
        """The id of the one stored session whose id starts with prefix."""
        if not prefix or not VALID_ID.fullmatch(prefix):
            raise UnknownSession(f"invalid session id: {prefix!r}")
        if self.path(prefix).is_file():
            return prefix
        matches = sorted(p.stem for p in self.root.glob(f"{prefix}*{SUFFIX}"))
        if not matches:
            raise UnknownSession(f"no stored session {prefix!r}")
        if len(matches) > 1:
            raise UnknownSession(f"{prefix!r} is ambiguous: {', '.join(matches)}")
        return matches[0]

    def latest(self, cwd: Path | str) -> Stored | None:
        stored = self.list(cwd)
        return stored[0] if stored else None

    def delete(self, session_id: str) -> None:
        """Remove a stored session; not one that a process has open (SessionLocked)."""
        writer = self.writer(session_id)
        if not writer.path.is_file():
            raise UnknownSession(f"no stored session {session_id!r}")
        writer.open()  # takes the lock, or raises SessionLocked
        try:
            writer.path.unlink()
        finally:
            writer.close()

    def writer(self, session_id: str) -> Writer:
        return Writer(self.path(session_id))


class Writer:
    """Appends records to one session file: one write, flush and fsync per record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def opened(self) -> bool:
        return self._fd is not None

    def open(self) -> Writer:
        """Create (or reopen) and lock the file; cut a torn last line left by a crash."""
        if self._fd is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
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

    def append(self, record: dict[str, Any]) -> None:
        self.open()
        assert self._fd is not None
        data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
