"""Expansion: a prompt's text, its attachments and its `@` mentions, as the one user
message the model reads and the conversation keeps (so `/context` shows what the
model read).

`expand(text, attachments, cwd=, files=, provider=)` (or `for_session(session, …)`):
1. checks every attachment (attachments.py) and finds the mentions (mentions.py);
   mentions come first, in the text's order, then the attachments in theirs; the
   same file, folder or symbol (and range) twice is one;
2. reads what they name, each into one block (blocks.py):
   - file, symbol: through `files` (an editor's unsaved buffer when it serves
     reads), capped as the `read` tool caps (READ_LINES lines, READ_CAP bytes), cut
     at a line with a `note` saying how to read on; `lines` says which lines are
     shown when not the whole file. Refused: a file past FILE_CAP bytes, a FIFO or
     device, a file with more than one hard link (its other name may be outside the
     folder: filesystem.linked_elsewhere), a binary file (a NUL byte, or not UTF-8).
     A png, jpeg, gif or webp file is attached as that image;
   - folder: the cwd's index (paths.py, `.gitignore` honoured), the files under it,
     shallowest first, at most FOLDER_ENTRIES, with a note when more; each name
     through blocks.visible, so a file name cannot add lines of its own;
   - selection: the text the editor sent, capped as a file is;
   - diagnostics: one line per item, `path:line:column: severity: message (source)`,
     at most MAX_DIAGNOSTICS, with a note when more;
   - image: not a block: an image part after the text;
3. refuses, before anything is kept or sent: more than TOTAL_CAP bytes of blocks,
   more than MAX_IMAGES images or IMAGES_CAP bytes of them, and any image when the
   provider has no `vision`.

The result is the text with its blocks (a string), or, with images, the parts
`[{type: text, text}, {type: image, mimeType, data}, …]` (conversation.py).
Without attachments and mentions the text is the message (escaped as blocks.py says).
"""

from __future__ import annotations

import asyncio
import base64
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..base import regular
from ..base.errors import AttachmentError
from ..conversation import Content, Part, image_bytes
from ..edits.filesystem import excerpt_of_text, linked_elsewhere
from . import attachments as shapes
from . import blocks, mentions, paths
from .attachments import Attachment, Lines
from .fit import Fit, fixed_chars

HEAD = 8192  # bytes read to tell text from binary


def accepts_images(provider: Any) -> bool:
    """A provider sees images when it says so: `vision = True`."""
    return bool(getattr(provider, "vision", False))


async def for_session(session: Any, text: str, attachments: Sequence[Any] = ()) -> Content:
    """`expand` with the session's cwd, files and provider, each attachment fitted to
    its share of the window (fit.py); what was cut, and a mention that attached
    nothing, is said to the user."""
    fit = Fit(session.provider, fixed_chars(session))
    try:
        return await expand(
            text,
            attachments,
            cwd=session.cwd,
            files=session.files,
            provider=session.provider,
            fit=fit,
        )
    finally:
        for note in fit.notes:
            session.output.say(note, "info")


async def expand(
    text: str,
    attachments: Sequence[Any] = (),
    *,
    cwd: Path,
    files: Any,
    provider: Any = None,
    mention: bool = True,
    fit: Fit | None = None,
) -> Content:
    """The user message for text and attachments (see the module docstring); with
    `fit`, each text attachment cut to its share of the window (fit.py)."""
    cwd = Path(cwd).resolve()
    if not isinstance(attachments, list | tuple):
        raise AttachmentError(
            "attachments: expected an array", reason="invalid", field="attachments"
        )
    if len(attachments) > shapes.MAX_ATTACHMENTS:
        raise AttachmentError(
            f"attachments: at most {shapes.MAX_ATTACHMENTS} in one message, got {len(attachments)}",
            reason="too_many",
            field="attachments",
        )
    given = [shapes.parse(value, n, cwd) for n, value in enumerate(attachments)]
    if any(a.type == "image" for a in given):
        _need_vision(provider, next(a for a in given if a.type == "image"))
    found: list[mentions.Mention] = []
    if mention and "@" in text:
        missed = fit.notes if fit is not None else None
        text, found = await asyncio.to_thread(mentions.find, text, cwd, missed)
    wanted, seen = [], set()
    for one in [*(from_mention(m, cwd) for m in found), *given]:
        if one.key not in seen:
            seen.add(one.key)
            wanted.append(one)
    if len(wanted) > shapes.MAX_ATTACHMENTS:
        raise AttachmentError(
            f"at most {shapes.MAX_ATTACHMENTS} attachments and mentions in one message",
            reason="too_many",
            field="attachments",
        )
    if fit is not None:
        fit.count = sum(1 for one in wanted if one.type != "image")
    made = [await render(one, files, cwd, fit) for one in wanted]
    texts = [m for m in made if isinstance(m, str)]
    images = [m for m in made if isinstance(m, dict)]
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    if size > shapes.TOTAL_CAP:
        raise AttachmentError(
            f"the attachments come to {size} bytes of text; at most {shapes.TOTAL_CAP} go in "
            "one message: attach fewer, or a range of lines (@path:10-20)",
            reason="too_large",
            field="attachments",
        )
    if len(images) > shapes.MAX_IMAGES:
        raise AttachmentError(
            f"at most {shapes.MAX_IMAGES} images in one message, got {len(images)}",
            reason="too_many",
            type="image",
            field="attachments",
        )
    weight = sum(image_bytes(image) for image in images)
    if weight > shapes.IMAGES_CAP:
        raise AttachmentError(
            f"the images come to {weight} bytes; at most {shapes.IMAGES_CAP} in one message",
            reason="too_large",
            type="image",
            field="attachments",
        )
    if images:
        _need_vision(provider, next(a for a, m in zip(wanted, made, strict=True) if m in images))
    message = blocks.message(text, texts)
    return [{"type": "text", "text": message}, *images] if images else message


def from_mention(found: mentions.Mention, cwd: Path) -> Attachment:
    path = (cwd / found.path).resolve()
    where, shown = f"@{found.text}", blocks.visible(found.path)
    if found.folder:
        return Attachment("folder", path, shown, where=where)
    lines = Lines(found.first, found.last or found.first) if found.first is not None else None
    return Attachment("file", path, shown, lines, where=where)


def _need_vision(provider: Any, one: Attachment) -> None:
    if accepts_images(provider):
        return
    name = getattr(provider, "name", None)
    model = getattr(provider, "model", None)
    which = f"the {name} provider" if name else "this provider"
    which += f" (model {model})" if model else ""
    raise one.fail(
        "vision",
        f"{which} does not accept images: switch to one that does (anthropic, openai, or "
        "ollama with a vision model), or leave the image out",
    )


# -- one block each -------------------------------------------------------------------
async def render(one: Attachment, files: Any, cwd: Path, fit: Fit | None = None) -> str | Part:
    if one.type == "image":
        return {"type": "image", "mimeType": one.mime, "data": one.data}
    if one.type == "selection":
        shown = await asyncio.to_thread(excerpt, one.text or "", 1, shapes.READ_LINES)
        return blocks.block(
            "selection", shown.text, path=one.shown, lines=str(one.lines), note=shown.note
        )
    if one.type == "diagnostics":
        return diagnostics_block(one)
    if one.type == "folder":
        return await folder_block(one, cwd)
    return await file_block(one, files, fit)


def diagnostics_block(one: Attachment) -> str:
    lines = []
    for item in one.items:
        where = f"{item.path}:" if item.path else ""
        head = f"{where}{item.line}:{item.column}: {item.severity or 'problem'}: "
        source = f" ({item.source})" if item.source else ""
        lines.append(head + item.message.replace("\n", "\n  ") + source)
    body = "\n".join(lines)
    note = f"showing {len(one.items)} of {len(one.items) + one.more}" if one.more else None
    if not one.items:
        note = "no problems"
    shown = excerpt(body, 1, shapes.MAX_DIAGNOSTICS * 10)
    return blocks.block("diagnostics", shown.text, path=one.shown or None, note=note or shown.note)


async def folder_block(one: Attachment, cwd: Path) -> str:
    assert one.path is not None
    if not await asyncio.to_thread(one.path.is_dir):
        raise one.fail("not_found", f"{one.shown} is not a folder")
    listing = await paths.index(cwd).ready()
    folder = "" if one.path == cwd else one.shown

    def shallow_first() -> tuple[list[str], int]:
        under = listing.under(folder)
        return sorted(under, key=lambda p: (p.count("/"), p))[: shapes.FOLDER_ENTRIES], len(under)

    entries, total = await asyncio.to_thread(shallow_first)
    note = None
    if total > len(entries):
        note = f"showing {len(entries)} of {total} files"
    elif not entries:
        note = "no files (files that .gitignore ignores are not listed)"
    if listing.truncated:
        note = f"{note or f'{total} files'}; the listing of the working directory was cut"
    shown = "\n".join(blocks.visible(entry) for entry in entries)  # a name holds no line
    return blocks.block("folder", shown, path=one.shown, note=note)


async def file_block(one: Attachment, files: Any, fit: Fit | None = None) -> str | Part:
    """A file's (or a symbol's) lines through `files` (or as the client sent them),
    checked and capped."""
    assert one.path is not None
    if one.text is not None:
        if "\0" in one.text:
            raise one.fail("binary", f"{one.shown} is a binary file, not text")
        return await lines_block(one, one.text, fit)
    kind, size, head = await asyncio.to_thread(probe, one.path)
    if kind == "folder":
        if one.type == "file":
            raise one.fail("invalid", f"{one.shown} is a folder: attach it as a folder")
        raise one.fail("invalid", f"{one.shown} is a folder, not a file")
    if kind == "other":
        raise one.fail("refused", f"{one.shown} is not a regular file")
    if kind == "linked":
        raise one.fail(
            "refused",
            f"{one.shown} has {size} hard links: its other names may be outside the working "
            "directory, so it is not attached (a hard link counts as outside)",
        )
    if size > shapes.FILE_CAP:
        raise one.fail(
            "too_large",
            f"{one.shown} is {size} bytes; a file past {shapes.FILE_CAP} (ELELEM_FILE_CAP) "
            "is not attached",
        )
    mime = shapes.image_type(head)
    if mime is not None and one.type == "file":
        return await image_file(one, mime, size)
    if b"\0" in head:
        raise one.fail("binary", f"{one.shown} is a binary file, not text")
    try:
        text = await files.read_text(one.path, errors="strict")
    except FileNotFoundError:
        raise one.fail("not_found", f"{one.shown}: no such file") from None
    except UnicodeDecodeError:
        raise one.fail("binary", f"{one.shown} is not UTF-8 text (a binary file?)") from None
    except OSError as exc:
        raise one.fail("unreadable", f"{one.shown}: {exc}") from None
    if "\0" in text:
        raise one.fail("binary", f"{one.shown} is a binary file, not text")
    return await lines_block(one, text, fit)


async def lines_block(one: Attachment, text: str, fit: Fit | None = None) -> str:
    """The block of a file's text: the lines asked for, capped as `read` caps, then
    to its share of the window (fit.py)."""
    first = one.lines.first if one.lines else 1
    wanted = one.lines.last - first + 1 if one.lines else None
    limit = min(wanted or shapes.READ_LINES, shapes.READ_LINES)
    goes_on = wanted is None or wanted > shapes.READ_LINES
    shown = await asyncio.to_thread(excerpt, text, first, limit, goes_on)
    if fit is not None and (cut := await fit.fitted(shown.text, shown.first, text, one.shown)):
        shown = Shown(*cut)
    whole = one.lines is None and shown.note is None
    lines = None if whole else (f"{shown.first}-{shown.last}" if shown.last >= first else None)
    return blocks.block(
        one.type,
        shown.text,
        name=one.name or None,
        path=one.shown,
        lines=lines,
        note=shown.note,
    )


async def image_file(one: Attachment, mime: str, size: int) -> Part:
    assert one.path is not None
    if size > shapes.IMAGE_CAP:
        raise one.fail(
            "too_large", f"{one.shown} is {size} bytes; an image takes at most {shapes.IMAGE_CAP}"
        )
    raw = await asyncio.to_thread(regular.read, one.path, shapes.IMAGE_CAP + 1)
    data = base64.b64encode(raw[: shapes.IMAGE_CAP + 1]).decode("ascii")
    checked = shapes.image(mime, data, one.where)
    return {"type": "image", "mimeType": checked.mime, "data": checked.data}


def probe(path: Path) -> tuple[str, int, bytes]:
    """("file", size, first bytes), ("linked", hard links, b"") for a file with more
    than one (filesystem.linked_elsewhere), ("folder"|"other"|"missing", 0, b"")."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "missing", 0, b""
    except OSError:
        return "other", 0, b""
    if stat.S_ISDIR(info.st_mode):
        return "folder", 0, b""
    if not stat.S_ISREG(info.st_mode):
        return "other", 0, b""
    if linked_elsewhere(info):
        return "linked", info.st_nlink, b""
    try:
        return "file", info.st_size, regular.read(path, HEAD)
    except OSError:
        return "other", 0, b""


class Shown(NamedTuple):
    """Lines first..last of a text, and what was left out (None: nothing)."""

    text: str
    first: int
    last: int
    note: str | None


def excerpt(text: str, offset: int, limit: int, whole: bool = True) -> Shown:
    """Lines offset.. of text: at most `limit` lines and READ_CAP bytes, as `read` cuts
    (files.excerpt_of_text); `whole`: say when the text goes on."""
    cut = excerpt_of_text(text, offset, limit, shapes.READ_CAP)
    note = cut.note
    if not whole and note is not None and note.startswith("showing lines"):
        note = None
    return Shown(cut.text, cut.first, cut.last, note)
