"""Records: the stored session file's format, written and read here and nowhere else.

One JSON object per line, each with a `type`:

    {"type": "session", "version": 2, "id", "cwd", "provider", "model", "created", "title"}
    {"type": "message", "role", "content", "at"}     a kept message, as it was added (content:
                                                     a string, or text and image parts)
    {"type": "clear", "at"}                          /clear or /compact emptied the history
    {"type": "meta", "provider", "model", "at"}      the provider or model changed
    {"type": "turn", "turn", "at"}                   turn number `turn` begins here (before
                                                     its prompt): its checkpoint's name
    {"type": "rewind", "turn", "at"}                 the conversation went back to just
                                                     before that turn, dropping it and the
                                                     later ones (a clear since is undone)

The first line is the metadata. A half-written last line (the process died mid-write)
is ignored on read; a corrupt line in the middle is skipped with a warning, and so is a
record of a type this version does not know. Reading folds the records into a
`Conversation` (`begin_turn`, `add`, `clear`, `rewind`), the same one a session keeps,
so a reloaded session has its turns' numbers and can rewind them. Version 1 files (no
`turn` records) load as they are, with no turns to rewind; their next turn is 1.
`Stored` is a file read back: its metadata, kept messages and that conversation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..conversation import Conversation, Message, is_content, text_of
from ..jsonsafe import dumps, loads
from ..owned import read_bytes

if TYPE_CHECKING:
    from ..ports import SessionView

log = logging.getLogger(__name__)
Record = dict[str, Any]

VERSION = 2  # 2: turn and rewind records
TITLE_LENGTH = 80
ROLES = ("user", "assistant", "tool")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def title_of(text: str) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"


# -- writing ---------------------------------------------------------------------------
def header(session: SessionView, first: Message) -> Record:
    """The metadata line, written with the first kept message (a prompt gives the title)."""
    title = title_of(text_of(first.get("content"))) if first.get("role") == "user" else ""
    return {
        "type": "session",
        "version": VERSION,
        "id": session.id,
        "cwd": str(session.cwd),
        "provider": session.provider_name,
        "model": session.model,
        "created": now(),
        "title": title,
    }


def message(kept: Message) -> Record:
    return {"type": "message", "role": kept["role"], "content": kept["content"], "at": now()}


def cleared() -> Record:
    return {"type": "clear", "at": now()}


def meta(provider: str, model: str | None) -> Record:
    return {"type": "meta", "provider": provider, "model": model, "at": now()}


def turn(number: int, at: float) -> Record:
    return {"type": "turn", "turn": number, "at": stamp(at)}


def rewound(number: int) -> Record:
    return {"type": "rewind", "turn": number, "at": now()}


def stamp(at: float) -> str:
    """Unix seconds as the file writes times (ISO 8601, UTC, milliseconds)."""
    when = datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")
    return when.replace("+00:00", "Z")


def seconds(text: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return None


def encode(record: Record) -> bytes:
    """One line of the file."""
    return (dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


# -- reading ---------------------------------------------------------------------------
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
    conversation: Conversation = field(default_factory=Conversation)  # with its turns

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


def read_lines(path: Path) -> list[Record]:
    """The file's records; a torn last line is dropped, a corrupt middle line skipped."""
    data = read_bytes(path)  # never through a link (owned.py)
    lines = data.split(b"\n")
    records = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = loads(raw)
            if not isinstance(record, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            if number < len(lines):  # complete line, yet unreadable: say so, keep going
                log.warning("store: %s line %d skipped: %s", path, number, exc)
            continue
        records.append(record)
    return records


def head_of(first_line: bytes, path: Path, updated: str) -> Stored:
    """A stored session's metadata from its first line alone (for listings)."""
    return replay([loads(first_line)], path, updated)


def replay(records: list[Record], path: Path, updated: str) -> Stored:
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
    kept = stored.conversation
    for record in records[1:]:
        kind = record.get("type")
        if kind == "message" and record.get("role") in ROLES:
            content = record.get("content", "")
            kept.add(record["role"], content if is_content(content) else "")
        elif kind == "clear":
            kept.clear()
        elif kind == "meta":
            stored.provider = str(record.get("provider") or stored.provider)
            stored.model = record.get("model", stored.model)
        elif kind in ("turn", "rewind"):
            fold_turn(kept, record, path)
    stored.messages = list(kept)
    return stored


def fold_turn(kept: Conversation, record: Record, path: Path) -> None:
    """A `turn` or `rewind` record; one that does not fit (a hand-edited file) is
    skipped with a warning."""
    number = record.get("turn")
    try:
        if record["type"] == "turn":
            kept.begin_turn(number, seconds(record.get("at")))  # type: ignore[arg-type]
        else:
            kept.rewind(number)  # type: ignore[arg-type]
    except (ValueError, KeyError, TypeError):
        log.warning("store: %s: a %s record of turn %r skipped", path, record["type"], number)
