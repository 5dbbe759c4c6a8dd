"""Records: the stored session file's format, written and read here and nowhere else.

One JSON object per line, each with a `type`:

    {"type": "session", "version": 2, "id", "cwd", "provider", "model", "created", "title"}
    {"type": "message", "role", "content", "at"}     a kept message, as it was added (content:
                                                     a string, or text and image parts); a
                                                     user message that is no prompt (no reply
                                                     is due: /compact's summary) has
                                                     `"prompt": false`
    {"type": "tool", "id", "name", "arguments", "ok", "result", "at"}
                                                     a tool call and its result, for redrawing
                                                     only: the model never reads it again
    {"type": "clear", "at"}                          /clear emptied the history
    {"type": "clear", "compacted": true, "at"}       a compaction (automatic, or /compact)
                                                     emptied the model's history for its
                                                     summary: the transcript the user sees
                                                     keeps what came before, and a
                                                     `{"type": "compacted"}` marker (a
                                                     version 2 reader takes it as a clear)
    {"type": "meta", "provider", "model", "at"}      the provider or model changed
    {"type": "mode", "mode", "at"}                   the session's mode changed (modes.py);
                                                     the last one is the mode it resumes in
    {"type": "turn", "turn", "at"}                   turn number `turn` begins here (before
                                                     its prompt): its checkpoint's name
    {"type": "rewind", "turn", "at"}                 the conversation went back to just
                                                     before that turn, dropping it and the
                                                     later ones (a clear since is undone)
    {"type": "edit", "index", "content", "at"}       kept message `index` (from 0, among
                                                     the messages kept at that point) now
                                                     holds `content`, or is deleted when
                                                     `content` is null (`/context edit`,
                                                     `/context delete`)

The first line is the metadata; its title is empty when the session was stored before
its first prompt (the ACP face stores a session when it is created): the first prompt
then gives it. A half-written last line (the process died mid-write) is ignored on
read; a corrupt line in the middle is skipped with a warning; a record of a type this
version does not know is skipped, so a newer file still loads. Version 1 files (no
`tool`, `turn` or `rewind` records, no `prompt` field) load as they are, with no turns
to rewind; their next turn is 1.

A tool record is bounded: each string in its arguments and result is cut at
`TEXT_CAP` characters (a diff at `DIFF_CAP`), and a record over `RECORD_CAP` bytes keeps
only the call's name and outcome. The values of environment variables that hold
secrets (`*_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`), and strings shaped like API keys,
are replaced by `[redacted]` before the record is written (the names: `keys.secret`, and
any with KEY, TOKEN, PASSWORD or CREDENTIAL in them; the values: `keys.environ()`, which
still holds the keys the faces moved out of the environment).

Reading folds the records into a `Conversation` (`begin_turn`, `add`, `clear`,
`rewind`), the same one a session keeps, so a reloaded session has its turns' numbers
and can rewind them, and into a `History` that follows the same changes (the kept
messages and tool records in order, as faces redraw them). `Stored` is a file read
back: its metadata, kept messages, that conversation and that history.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base import keys
from ..base.jsonsafe import dumps, loads
from ..conversation import Conversation, Message, is_content, text_of
from ..safety.owned import read_bytes
from .history import History

if TYPE_CHECKING:
    from ..ports import SessionView

log = logging.getLogger(__name__)
Record = dict[str, Any]

VERSION = 2  # 2: tool, turn and rewind records; a user message's `prompt`
TITLE_LENGTH = 80
ROLES = ("user", "assistant", "tool")
TEXT_CAP = 4000  # characters of one string in a tool record
DIFF_CAP = 20000  # characters of a tool result's diff
RECORD_CAP = 64 * 1024  # bytes of one tool record; a larger one keeps the outcome only
ITEMS_CAP = 200  # entries of one list or object in a tool record
DEPTH_CAP = 8
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
SECRET_SHAPE = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20,})"
)
REDACTED = "[redacted]"


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


def message(kept: Message, prompt: bool = True) -> Record:
    """A kept message; `prompt` false for a user message that awaits no reply."""
    record = {"type": "message", "role": kept["role"], "content": kept["content"], "at": now()}
    if kept["role"] == "user" and not prompt:
        record["prompt"] = False
    return record


def tool(call: dict[str, Any], ok: bool, payload: dict[str, Any]) -> Record:
    """A tool call and its result, bounded and with secrets taken out (display only)."""
    secrets = secret_values()
    arguments = call.get("arguments")
    record = {
        "type": "tool",
        "id": str(call.get("id", "")),
        "name": str(call.get("name", "")),
        "arguments": bounded(arguments if isinstance(arguments, dict) else {}, secrets),
        "ok": bool(ok),
        "result": {
            k: bounded(v, secrets, DIFF_CAP if k == "diff" else TEXT_CAP)
            for k, v in list(payload.items())[:ITEMS_CAP]
        },
        "at": now(),
    }
    if len(encode(record)) > RECORD_CAP:
        kept = {"error": record["result"]["error"]} if "error" in record["result"] else {}
        record["arguments"] = {}
        record["result"] = {**kept, "truncated": True}
        record["result"] = bounded(record["result"], secrets)
    return record


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """The secrets to keep out of a record: every variable whose name says it holds one
    (keys.secret, and anything with KEY, TOKEN, PASSWORD or CREDENTIAL in its name), as
    the process started with them (keys.environ: the keys it moved out of os.environ)."""
    env = keys.environ() if env is None else env
    found = {
        v for k, v in env.items() if (keys.secret(k, v) or SECRET_NAME.search(k)) and len(v) >= 8
    }
    return sorted(found, key=len, reverse=True)


def redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return SECRET_SHAPE.sub(REDACTED, text)


def bounded(value: Any, secrets: list[str], cap: int = TEXT_CAP, depth: int = 0) -> Any:
    """A JSON value with every string cut at `cap` and redacted, lists and objects cut
    at ITEMS_CAP entries and DEPTH_CAP levels."""
    if isinstance(value, str):
        text = redact(value, secrets)
        if len(text) > cap:
            text = f"{text[:cap]}[... {len(text) - cap} more characters not kept]"
        return text
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= DEPTH_CAP:
        return "[... not kept: nested too deep]"
    if isinstance(value, dict):
        return {
            redact(str(k), secrets)[:200]: bounded(v, secrets, cap, depth + 1)
            for k, v in list(value.items())[:ITEMS_CAP]
        }
    if isinstance(value, list | tuple):
        return [bounded(v, secrets, cap, depth + 1) for v in list(value)[:ITEMS_CAP]]
    return bounded(str(value), secrets, cap, depth)


def cleared(compacted: bool = False) -> Record:
    if compacted:
        return {"type": "clear", "compacted": True, "at": now()}
    return {"type": "clear", "at": now()}


def meta(provider: str, model: str | None) -> Record:
    return {"type": "meta", "provider": provider, "model": model, "at": now()}


def mode(mode_id: str) -> Record:
    return {"type": "mode", "mode": str(mode_id)[:64], "at": now()}


def turn(number: int, at: float) -> Record:
    return {"type": "turn", "turn": number, "at": stamp(at)}


def rewound(number: int) -> Record:
    return {"type": "rewind", "turn": number, "at": now()}


def edited(index: int, content: Any) -> Record:
    return {"type": "edit", "index": index, "content": content, "at": now()}


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
    history: History = field(default_factory=History)  # messages and tool records, in order
    interrupted: bool = False  # the last kept message is a prompt with no reply
    mode: str | None = None  # the last mode record's: the mode it resumes in
    read_as: tuple[int, ...] | None = field(default=None, compare=False)  # store.fingerprint

    def shown(self) -> list[Record]:
        """The history as faces show it: `{type: "message", role, content}` and
        `{type: "tool", id, name, arguments, ok, result}`, without times."""
        return [
            {k: v for k, v in entry.items() if k not in ("at", "prompt")}
            for entry in self.history.entries
        ]

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
    return parse_lines(read_bytes(path), path)  # never through a link (owned.py)


def parse_lines(data: bytes, path: Path) -> list[Record]:
    """`read_lines` of a file's bytes (`path` names it in warnings). The lines are
    `data.split(b"\\n")`'s, each cut out as it is read (never all at once: a 60 MB
    file is not copied whole into lines beside itself)."""
    records = []
    at, number = 0, 0
    while True:
        end = data.find(b"\n", at)
        raw = data[at:end] if end >= 0 else data[at:]
        number += 1
        if raw.strip():
            try:
                record = loads(raw)
                if not isinstance(record, dict):
                    raise ValueError("not an object")
                records.append(record)
            except ValueError as exc:
                if end >= 0:  # complete line, yet unreadable: say so, keep going
                    log.warning("store: %s line %d skipped: %s", path, number, exc)
        if end < 0:
            return records
        at = end + 1


def head_of(lines: list[bytes], path: Path, updated: str) -> Stored:
    """A stored session's metadata from its first lines (for listings): the first
    line, and when its title is empty, the lines up to the first prompt."""
    head = metadata(loads(lines[0]), path, updated)
    if not head.title:
        for raw in lines[1:]:
            try:
                record = loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict) and (title := prompt_title(record)) is not None:
                head.title = title
                break
    return head


def prompt_title(record: Record) -> str | None:
    """The title a record gives a session stored before its first prompt: a prompt's first
    line; None for any other record."""
    if record.get("type") != "message" or record.get("role") != "user":
        return None
    if record.get("prompt") is False or not is_content(record.get("content")):
        return None
    return title_of(text_of(record.get("content")))


def shown_tool(record: Record) -> Record | None:
    """A tool record as read back, or None if it is not one this version can show."""
    name, arguments, result = record.get("name"), record.get("arguments"), record.get("result")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    if not isinstance(result, dict) or not isinstance(record.get("ok"), bool):
        return None
    return {
        "type": "tool",
        "id": str(record.get("id") or ""),
        "name": name,
        "arguments": arguments,
        "ok": record["ok"],
        "result": result,
        "at": str(record.get("at") or ""),
    }


def metadata(head: Any, path: Path, updated: str) -> Stored:
    """A stored session with its first record's metadata alone (ValueError when that
    record is no session metadata)."""
    if not isinstance(head, dict) or head.get("type") != "session":
        raise ValueError(f"{path}: no session metadata")
    return Stored(
        path.stem,  # the file names the session, whatever a hand-edited header says
        str(head.get("cwd") or ""),
        str(head.get("provider") or "stub"),
        head.get("model"),
        str(head.get("created") or ""),
        str(head.get("title") or ""),
        updated,
        path,
    )


def replay(records: list[Record], path: Path, updated: str) -> Stored:
    """Fold the records into metadata and the kept messages."""
    stored = metadata(records[0] if records else {}, path, updated)
    kept, history = stored.conversation, stored.history
    for record in records[1:]:
        kind = record.get("type")
        if kind == "message" and record.get("role") in ROLES:
            content = record.get("content", "")
            content = content if is_content(content) else ""
            kept.add(record["role"], content)
            entry = {"type": "message", "role": record["role"], "content": content}
            if record["role"] == "user" and record.get("prompt") is False:
                entry["prompt"] = False
            history.add({**entry, "at": record.get("at", "")})
            if not stored.title and (title := prompt_title(record)) is not None:
                stored.title = title
        elif kind == "tool" and (shown := shown_tool(record)) is not None:
            history.add(shown)
        elif kind == "clear":
            compacted = record.get("compacted") is True
            kept.clear(compacted)
            if compacted:
                history.compact(str(record.get("at") or ""))
            else:
                history.clear()
        elif kind == "meta":
            stored.provider = str(record.get("provider") or stored.provider)
            stored.model = record.get("model", stored.model)
        elif kind == "mode" and isinstance(record.get("mode"), str):
            stored.mode = record["mode"][:64]
        elif kind in ("turn", "rewind"):
            fold_turn(kept, history, record, path)
        elif kind == "edit":
            fold_edit(kept, history, record, path)
    stored.messages = list(kept)
    last = history.last_message()
    stored.interrupted = (
        last is not None and last["role"] == "user" and last.get("prompt") is not False
    )
    if any(r.get("type") == "edit" for r in records[-1:]):  # the user cut the reply
        stored.interrupted = False
    return stored


def fold_turn(kept: Conversation, history: History, record: Record, path: Path) -> None:
    """A `turn` or `rewind` record, in the conversation and then its history; one that
    does not fit (a hand-edited file) is skipped with a warning."""
    number = record.get("turn")
    try:
        if record["type"] == "turn":
            kept.begin_turn(number, seconds(record.get("at")))  # type: ignore[arg-type]
            history.begin(number)  # type: ignore[arg-type]
        else:
            kept.rewind(number)  # type: ignore[arg-type]
            history.rewind(number)  # type: ignore[arg-type]
    except (ValueError, KeyError, TypeError):
        log.warning("store: %s: a %s record of turn %r skipped", path, record["type"], number)


def fold_edit(kept: Conversation, history: History, record: Record, path: Path) -> None:
    """An `edit` record; one that does not fit (a hand-edited file) is skipped."""
    index, content = record.get("index"), record.get("content")
    if content is not None and not is_content(content):
        log.warning("store: %s: an edit record with unusable content skipped", path)
        return
    try:
        kept.edit(index, content)  # type: ignore[arg-type]
    except (IndexError, TypeError):
        log.warning("store: %s: an edit record of message %r skipped", path, index)
        return
    history.edit(index, content)  # type: ignore[arg-type]
