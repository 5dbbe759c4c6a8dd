"""Attachments: what the user points at, checked, as the core takes it.

A client sends a list of these beside the prompt's text (protocol.md, Attachments):

    {type: "file", path, range?, text?}         the file's text (its lines in range),
                                                read through `session.files` (an
                                                editor's unsaved buffer when it has
                                                one), or the `text` the client sent
                                                (an ACP embedded resource)
    {type: "folder", path}                      a bounded listing of its files
    {type: "selection", path, range, text}      the selected text, as the editor sent it
    {type: "diagnostics", path?, items: [{range, severity?, message, source?, path?}]}
    {type: "image", mimeType, data}             base64; png, jpeg, gif or webp
    {type: "symbol", name, path, range}         the lines of range in the file

`range` is the LSP shape, zero-based, end exclusive:
`{start: {line, character}, end: {line, character}}`; the model reads 1-based lines.
`parse` checks one value and gives an `Attachment`, or raises AttachmentError saying
which attachment (`attachments[2]`), which field, and why.

Names: every path, symbol name and diagnostic source the model reads passes through
`blocks.visible` (control characters written as escapes; a message keeps its line
breaks only), so no name an editor sends writes lines of its own into the prompt.

Paths: relative to the session's cwd, or absolute; `~` is expanded. Outside cwd is
allowed here (the user picked the file in the editor) and the model reads the path
absolute; a folder must be inside cwd (its listing is the cwd's index). A path that
resolves into /proc, /sys or /dev is refused, as the file tools refuse it. An `@`
mention is stricter: only inside cwd (see mentions.py).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..base.errors import AttachmentError

# The `read` tool's caps (expansion.py reads them from here) and its refusal.
from ..edits.filesystem import FILE_CAP as FILE_CAP
from ..edits.filesystem import READ_CAP, refusal
from ..edits.filesystem import READ_LINES as READ_LINES
from .blocks import visible

MAX_ATTACHMENTS = 32  # in one message, mentions included
TOTAL_CAP = 4 * READ_CAP  # bytes of text, all blocks together
IMAGE_CAP = 5 * 1024 * 1024  # bytes, decoded (Anthropic's limit per image)
MAX_IMAGES = 8
IMAGES_CAP = 20 * 1024 * 1024  # bytes, all the images of a message (requests stay < 32 MB)
FOLDER_ENTRIES = 200
MAX_DIAGNOSTICS = 200
MESSAGE_CAP = 2000  # characters of one diagnostic's message
NAME_CAP = 200
PATH_CAP = 4096
LINE_CAP = 10_000_000
SEVERITIES = ("error", "warning", "information", "hint")
TYPES = ("file", "folder", "selection", "diagnostics", "image", "symbol")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


class Lines(NamedTuple):
    """1-based, inclusive."""

    first: int
    last: int

    def __str__(self) -> str:
        return f"{self.first}-{self.last}"


@dataclass(frozen=True)
class Diagnostic:
    line: int  # 1-based
    column: int  # 1-based
    severity: str | None
    message: str
    source: str | None
    path: str | None  # as the model reads it


@dataclass(frozen=True)
class Attachment:
    type: str
    path: Path | None = None  # resolved
    shown: str = ""  # the path as the model reads it
    lines: Lines | None = None
    text: str | None = None  # a selection's; a file's when the client sent it
    name: str = ""  # a symbol's
    items: tuple[Diagnostic, ...] = ()
    more: int = 0  # diagnostics left out
    mime: str = ""  # an image's
    data: str = ""  # an image's base64
    where: str = ""  # `attachments[2]` or `@src/app.py`, for errors

    @property
    def key(self) -> tuple[Any, ...]:
        """Attachments with the same key are one (the first is kept)."""
        if self.type in ("file", "folder", "symbol"):
            return (self.type, str(self.path), self.lines, self.name)
        return (id(self),)

    def fail(self, reason: str, text: str) -> AttachmentError:
        return failure(self.where, self.type, reason, text)


def failure(where: str, kind: str, reason: str, text: str) -> AttachmentError:
    data: dict[str, Any] = {"reason": reason, "type": kind}
    if where.startswith("attachments["):
        data["index"] = int(where[len("attachments[") : -1])
        data["field"] = where
    elif where.startswith("@"):
        data["mention"] = where
        data["field"] = "text"
    else:
        data["field"] = where
    return AttachmentError(f"{where} ({kind}): {text}", **data)


def parse(value: Any, index: int, cwd: Path) -> Attachment:
    """One attachment from a client, checked; AttachmentError otherwise."""
    where = f"attachments[{index}]"
    if not isinstance(value, dict) or value.get("type") not in TYPES:
        kind = value.get("type") if isinstance(value, dict) else None
        raise failure(
            where,
            str(kind)[:40] if kind is not None else "?",
            "invalid",
            f"type must be one of {', '.join(TYPES)}, got {_got(kind)}",
        )
    check = _Check(where, value["type"], value)
    kind = value["type"]
    if kind == "image":
        return image(check.field("mimeType", str), check.field("data", str), where)
    if kind == "diagnostics":
        return diagnostics(check, cwd)
    path, shown = located(check, cwd, "path")
    if kind == "file":
        lines = check.lines("range") if "range" in value else None
        given = check.field("text", str) if "text" in value else None
        return Attachment("file", path, shown, lines, given, where=where)
    if kind == "folder":
        if not path.is_relative_to(cwd.resolve()):
            raise check.fail("refused", f"path: {shown} is outside the working directory")
        return Attachment("folder", path, shown.rstrip("/") + "/", where=where)
    if kind == "selection":
        text = check.field("text", str)
        return Attachment("selection", path, shown, check.lines("range"), text, where=where)
    name = check.field("name", str)
    if not name or len(name) > NAME_CAP:
        raise check.fail("invalid", f"name: 1 to {NAME_CAP} characters")
    lines = check.lines("range")
    return Attachment("symbol", path, shown, lines, name=visible(name), where=where)


def image(mime: str, data: str, where: str) -> Attachment:
    """An image attachment, its data checked: base64, at most IMAGE_CAP bytes, and
    starting as an image of that type starts."""
    if mime not in IMAGE_TYPES:
        raise failure(
            where,
            "image",
            "invalid",
            f"mimeType: {_got(mime)} is not one of {', '.join(IMAGE_TYPES)}",
        )
    if len(data) > (IMAGE_CAP + 2) // 3 * 4:
        raise failure(where, "image", "too_large", f"more than {IMAGE_CAP} bytes (decoded)")
    if data.startswith("data:"):
        raise failure(where, "image", "invalid", "data: base64 alone, without a data: URL")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise failure(where, "image", "invalid", "data: not base64") from None
    if not raw:
        raise failure(where, "image", "invalid", "data: empty")
    if image_type(raw) != mime:
        raise failure(
            where, "image", "invalid", f"data is not a {mime} image (its first bytes say otherwise)"
        )
    return Attachment("image", mime=mime, data=data, where=where)


def image_type(head: bytes) -> str | None:
    """The image type a file's first bytes say, if one we send."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def diagnostics(check: _Check, cwd: Path) -> Attachment:
    shown = located(check, cwd, "path")[1] if "path" in check.value else None
    items = check.field("items", list)
    if len(items) > 10 * MAX_DIAGNOSTICS:
        raise check.fail("too_large", f"items: at most {10 * MAX_DIAGNOSTICS}")
    kept = []
    for n, item in enumerate(items[:MAX_DIAGNOSTICS]):
        one = _Check(check.where, "diagnostics", item, f"items[{n}].")
        if not isinstance(item, dict):
            raise one.fail("invalid", f"items[{n}]: expected an object, got {_got(item)}")
        lines = one.lines("range")
        severity = one.field("severity", str) if "severity" in item else None
        if severity is not None and severity not in SEVERITIES:
            raise one.fail("invalid", f"items[{n}].severity: one of {', '.join(SEVERITIES)}")
        message = one.field("message", str)
        if len(message) > MESSAGE_CAP:
            message = message[: MESSAGE_CAP - 1] + "…"
        message = "\n".join(visible(line) for line in message.split("\n"))
        source = visible(one.field("source", str)[:NAME_CAP]) if "source" in item else None
        path = located(one, cwd, "path")[1] if "path" in item else shown
        column = item["range"]["start"]["character"] + 1
        kept.append(Diagnostic(lines.first, column, severity, message, source, path))
    more = len(items) - len(kept)
    return Attachment(
        "diagnostics", None, shown or "", items=tuple(kept), more=more, where=check.where
    )


def located(check: _Check, cwd: Path, field: str) -> tuple[Path, str]:
    """The resolved path of a field, and as the model reads it (relative inside cwd)."""
    value = check.field(field, str)
    if not value or "\0" in value or len(value) > PATH_CAP:
        raise check.fail(
            "invalid", f"{check.prefix}{field}: a path of 1 to {PATH_CAP} characters, with no NUL"
        )
    try:
        path = (cwd / Path(value).expanduser()).resolve()
    except (OSError, RuntimeError) as exc:
        raise check.fail("invalid", f"{check.prefix}{field}: {exc}") from None
    reason = refusal(path)
    if reason is not None:
        raise check.fail(
            "refused", f"{value}: {reason}; attachments do not read /proc, /sys or /dev"
        )
    return path, shown_path(path, cwd)


def shown_path(path: Path, cwd: Path) -> str:
    """The path as the model reads it: relative inside cwd, control characters made
    visible (blocks.visible)."""
    cwd = cwd.resolve()
    return visible(path.relative_to(cwd).as_posix() if path.is_relative_to(cwd) else str(path))


class _Check:
    """Field checks for one attachment value, each failing with where and what."""

    def __init__(self, where: str, kind: str, value: Any, prefix: str = "") -> None:
        self.where, self.kind, self.value, self.prefix = where, kind, value, prefix

    def fail(self, reason: str, text: str) -> AttachmentError:
        return failure(self.where, self.kind, reason, text)

    def field(self, name: str, kind: type) -> Any:
        value = self.value.get(name) if isinstance(self.value, dict) else None
        if not isinstance(value, kind) or isinstance(value, bool):
            names: dict[type, str] = {str: "a string", list: "an array", dict: "an object"}
            expected = names.get(kind, kind.__name__)
            raise self.fail(
                "invalid", f"{self.prefix}{name}: expected {expected}, got {_got(value)}"
            )
        return value

    def lines(self, name: str) -> Lines:
        """An LSP range as the 1-based lines it covers (an end at character 0 of a later
        line ends on the line before)."""
        rng = self.field(name, dict)
        ends = []
        for edge in ("start", "end"):
            spot = rng.get(edge)
            ok = isinstance(spot, dict) and all(
                isinstance(spot.get(k), int)
                and not isinstance(spot.get(k), bool)
                and 0 <= spot[k] <= LINE_CAP
                for k in ("line", "character")
            )
            if not ok:
                raise self.fail(
                    "invalid",
                    f"{self.prefix}{name}.{edge}: expected "
                    "{line, character}, whole numbers from 0",
                )
            ends.append((spot["line"], spot["character"]))
        (line, character), (end, end_character) = ends
        if (end, end_character) < (line, character):
            raise self.fail("invalid", f"{self.prefix}{name}: ends before it starts")
        last = end if end_character == 0 and end > line else end + 1
        return Lines(line + 1, last)


def _got(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return repr(value[:40])
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)
