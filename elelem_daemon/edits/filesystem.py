"""Files: where the file tools read and write. A face may put the editor in its place.

`session.files` is a `LocalFiles` unless a face replaces it with an `EditorFiles`
(below): the editor's buffers, through the face's own requests (`fs/read_text_file`
and `fs/write_text_file` in both editor faces, the daemon face's `files/read` and
`files/propose`), so the tools and attachments see unsaved changes and edits land in
the editor's undo history. `Files` is what every replacement has.

What is read is bounded, whatever the file:
- `excerpt(files, path, offset, limit, cap)` (the `read` tool) reads only the lines
  asked for, at most `cap` bytes, from the disk in blocks; a 4 GiB file costs what
  is shown. A replacement without `read_lines` gives its whole text, which is cut;
- `read_text` (whole-file edits) refuses a file past FILE_CAP bytes (ELELEM_FILE_CAP);
- only regular files are read or written: a FIFO, a socket or a device is refused
  (opened non-blocking, so a FIFO with no writer does not hang the reading thread).

No file tool, nor an attachment, touches /proc, /sys or /dev (`refusal`, below). A
regular file with more than one hard link counts as outside the working directory
(`linked_elsewhere`, the one home of that rule): the permission policy asks before a
tool writes or reads it, and no `@` mention or attachment reads it.

What review needs (changes.py runs it): `snapshot(path)` is the file's whole text with
its `version` (an editor's document version, else `sha256:<hex>` of the content) and a
`digest` the daemon computes itself, so what the agent read can be compared with what
is there now whoever serves the file; `propose(change, review)` lands a change and says
what happened (`changes.Outcome`). LocalFiles lands it on the disk, unless the disk no
longer holds what the change was made from (a conflict); it cannot review (`reviews`
is false): a face whose editor reviews says so. A `read` of the disk hashes the whole
file too (up to FILE_CAP), so a later edit in the turn can tell that it changed.

Reading runs in a thread; a cancelled or over-long read (TIME_LIMIT seconds) stops
at the next block.
"""

from __future__ import annotations

import asyncio
import codecs
import hashlib
import io
import os
import stat
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from ..base import regular
from ..base.config import number

if TYPE_CHECKING:
    from .changes import Change, Outcome

FILE_CAP = int(number("ELELEM_FILE_CAP", 32 * 1024 * 1024, minimum=1))
READ_LINES = 2000  # what one `read` (or one attached file) shows at most
READ_CAP = int(number("ELELEM_READ_CAP", 100000, minimum=1))
TIME_LIMIT = 30.0
BLOCK = 65536
REFUSED = (Path("/proc"), Path("/sys"), Path("/dev"))


def _devices() -> set[int]:
    found = set()
    for root in REFUSED[:2]:  # procfs and sysfs, wherever else they are mounted
        try:
            found.add(os.stat(root).st_dev)
        except OSError:
            pass
    return found


def refusal(path: Path) -> str | None:
    """Why a resolved path is off limits to every file tool and attachment, or None:
    /proc, /sys and /dev hold process environments and memory, and devices."""
    for root in REFUSED:
        if path.is_relative_to(root):
            return f"it is under {root}"
    try:
        if os.stat(path).st_dev in _devices():
            return "it is on a proc or sys file system"
    except OSError:
        pass
    return None


def linked_elsewhere(info: os.stat_result) -> bool:
    """Is this a regular file with more than one hard link? Its other names may be
    anywhere (`~/.ssh/id_rsa`), so it counts as outside the working directory."""
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1


def hard_links(path: Path) -> int:
    """How many hard links path has if `linked_elsewhere`, else 0 (also when it is gone)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return 0
    return info.st_nlink if linked_elsewhere(info) else 0


class Stopped(Exception):
    """A read that was cancelled or ran past its time."""


def open_regular(path: Path, write: bool = False) -> int:
    """An fd on path if it is a regular file; FileNotFoundError when there is none (or a
    folder), OSError for anything else that is not a regular file."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_TRUNC) if write else os.O_RDONLY
    try:
        return regular.opened(path, flags, 0o666)[0]  # the one non-blocking open
    except IsADirectoryError:
        raise FileNotFoundError(str(path)) from None
    except regular.NotRegular:
        if os.path.isdir(path):
            raise FileNotFoundError(str(path)) from None
        raise OSError(f"{path} is not a regular file") from None


@dataclass
class Excerpt:
    """Lines `first`..`last` of a file; `note` says what was left out (None: nothing).
    `digest`: the whole file's (`digest_of`), when it was hashed (`hashed`)."""

    text: str
    first: int
    last: int
    note: str | None = None
    digest: str | None = None
    hashed: bool = False


def digest_of(data: str | bytes) -> str:
    """The content hash the daemon compares (SHA-256 of the UTF-8 bytes, hex)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class FileState:
    """A file as the session sees it now: its text (None: no such file), its version
    (the editor's document version, or `sha256:<digest>`; None: no file), the digest
    of its text, and whether an editor's buffer served it."""

    text: str | None
    version: int | str | None
    digest: str | None
    editor: bool = False

    @classmethod
    def of(cls, text: str, version: int | str | None = None, editor: bool = False) -> FileState:
        digest = digest_of(text)
        return cls(text, f"sha256:{digest}" if version is None else version, digest, editor)

    @classmethod
    def absent(cls) -> FileState:
        return cls(None, None, None)


def cut(
    stream: BinaryIO,
    offset: int,
    limit: int,
    cap: int,
    check: Any = lambda: None,
) -> Excerpt:
    """Lines offset.. (1-based) of a binary stream: at most `limit` lines and `cap`
    bytes; `check()` runs between blocks and may raise Stopped."""
    line, block, ended = 1, b"", True
    while line < offset:  # skip whole blocks, counting newlines
        check()
        block = stream.read(BLOCK)
        if not block:
            total = line - 1 + (0 if ended else 1)
            return Excerpt("", offset, offset - 1, f"the file has {total} lines")
        ended = block.endswith(b"\n")
        count = block.count(b"\n")
        if line + count < offset:
            line += count
            continue
        at = -1
        for _ in range(offset - line):
            at = block.index(b"\n", at + 1)
        block, line = block[at + 1 :], offset
    out, lines, partial, note = bytearray(), 0, False, None
    while lines < limit:
        if not block:
            check()
            block = stream.read(BLOCK)
            if not block:
                break
        end = block.find(b"\n")
        piece = block if end < 0 else block[: end + 1]
        room = cap - len(out)
        if len(piece) > room:
            out += piece[:room]
            last = offset + lines
            note = (
                f"cut at {cap} bytes, in line {last}; "
                f"read on with offset={last + 1} (the rest of line {last} is skipped)"
            )
            text = codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(out))
            return Excerpt(text, offset, last, note)
        out += piece
        block = block[len(piece) :]
        if end >= 0:
            lines, partial = lines + 1, False
        else:
            partial = True
    last = offset + lines - (0 if partial else 1)
    if not out and offset > 1:  # the offset is just past the last line
        return Excerpt("", offset, offset - 1, f"the file has {offset - 1} lines")
    if lines >= limit and (block or stream.read(1)):
        note = f"showing lines {offset}-{last}; the file goes on: read on with offset={last + 1}"
    return Excerpt(bytes(out).decode("utf-8", "replace"), offset, last, note)


def excerpt_of_text(text: str, offset: int, limit: int, cap: int) -> Excerpt:
    shown = cut(io.BytesIO(text.encode("utf-8", "surrogatepass")), offset, limit, cap)
    shown.digest, shown.hashed = digest_of(text), True
    return shown


async def excerpt(files: Any, path: Path, offset: int, limit: int, cap: int) -> Excerpt:
    """What the `read` tool shows of path, through whichever files the session has."""
    reader = getattr(files, "read_lines", None)
    if reader is not None:
        return await reader(path, offset, limit, cap)
    return excerpt_of_text(await files.read_text(path, errors="replace"), offset, limit, cap)


async def snapshot(files: Any, path: Path, errors: str = "strict") -> FileState:
    """`files.snapshot(path)`, also for a replacement that has only `read_text`."""
    taker = getattr(files, "snapshot", None)
    if taker is not None:
        return await taker(path, errors)
    try:
        return FileState.of(await files.read_text(path, errors))
    except FileNotFoundError:
        return FileState.absent()


class Files(Protocol):
    async def read_text(self, path: Path, errors: str = "strict") -> str: ...

    async def write_text(self, path: Path, text: str) -> int: ...


class LocalFiles:
    """The local disk. A replacement has `read_text` and `write_text`; `read_lines`
    is used when it has one (a subclass that overrides only `read_text` gets its
    excerpts cut from that text, and its snapshots from it). `reviews`: whether
    `propose` can show a change to the user (here: no)."""

    reviews = False

    def _replaced(self) -> bool:
        """Whether a subclass serves the text (e.g. an editor's buffers), not the disk."""
        return type(self).read_text is not LocalFiles.read_text

    async def snapshot(self, path: Path, errors: str = "strict") -> FileState:
        """The whole text now, its version and digest; `FileState.absent()` when there
        is no such file."""
        if not self._replaced():
            return await self.disk_snapshot(path, errors)
        try:
            return FileState.of(await self.read_text(path, errors), editor=True)
        except FileNotFoundError:
            return FileState.absent()

    async def disk_snapshot(self, path: Path, errors: str = "strict") -> FileState:
        """`snapshot` from the disk itself."""
        try:
            data = await asyncio.to_thread(self._bytes, path)
        except FileNotFoundError:
            return FileState.absent()
        return FileState(data.decode("utf-8", errors), f"sha256:{digest_of(data)}", digest_of(data))

    async def propose(self, change: Change, review: bool = False) -> Outcome:
        """Land the change now (no review here): refused as a conflict when the file no
        longer holds what the change was made from."""
        from .changes import Outcome

        if review:
            raise ValueError("LocalFiles cannot review a change")
        now = await self.snapshot(change.path, errors="replace")
        if now.digest != change.base.digest:
            return Outcome("conflict")
        await self.write_text(change.path, change.new)
        return Outcome("accepted", tuple(h.id for h in change.hunks), change.new)

    async def read_text(self, path: Path, errors: str = "strict") -> str:
        """The file's text; FileNotFoundError when there is no such file."""
        return await asyncio.to_thread(self._whole, path, errors)

    @classmethod
    def _whole(cls, path: Path, errors: str) -> str:
        return cls._bytes(path).decode("utf-8", errors)

    @staticmethod
    def _bytes(path: Path) -> bytes:
        with open(open_regular(path), "rb") as file:
            size = os.fstat(file.fileno()).st_size
            data = file.read(FILE_CAP + 1) if size <= FILE_CAP else b""
        if size > FILE_CAP or len(data) > FILE_CAP:
            raise OSError(
                f"{path} is {max(size, len(data))} bytes; whole-file reads and edits take "
                f"at most {FILE_CAP} (ELELEM_FILE_CAP). Read it in parts with offset and limit"
            )
        return data

    async def read_lines(self, path: Path, offset: int, limit: int, cap: int) -> Excerpt:
        """Lines offset.. of the file, at most limit lines and cap bytes (see `cut`), and
        the whole file's digest when it is at most FILE_CAP bytes."""
        if self._replaced():  # a subclass's own text
            return excerpt_of_text(await self.read_text(path, errors="replace"), offset, limit, cap)
        return await self.disk_lines(path, offset, limit, cap)

    async def disk_lines(self, path: Path, offset: int, limit: int, cap: int) -> Excerpt:
        """`read_lines` from the disk itself, in blocks, hashing the whole file too."""
        stop, deadline = threading.Event(), time.monotonic() + TIME_LIMIT

        def check() -> None:
            if stop.is_set():
                raise Stopped("cancelled")
            if time.monotonic() > deadline:
                raise Stopped(f"the read took more than {TIME_LIMIT:g} s")

        def work() -> Excerpt:
            with open(open_regular(path), "rb", buffering=0) as file:
                shown = cut(file, offset, limit, cap, check)
                if os.fstat(file.fileno()).st_size <= FILE_CAP:
                    file.seek(0)
                    hashed = hashlib.sha256()
                    while block := file.read(BLOCK * 16):
                        check()
                        hashed.update(block)
                    shown.digest, shown.hashed = hashed.hexdigest(), True
                return shown

        try:
            return await asyncio.to_thread(work)
        except Stopped as exc:
            raise OSError(f"{path}: {exc}") from None
        finally:
            stop.set()  # a cancelled read stops at its next block

    async def write_text(self, path: Path, text: str) -> int:
        """Write the whole text (creating folders); return the number of bytes written."""
        data = text.encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)

        def work() -> None:
            with open(open_regular(path, write=True), "wb") as file:
                file.write(data)

        await asyncio.to_thread(work)
        return len(data)


EditorRead = Callable[[Path], Awaitable["str | FileState | None"]]
EditorWrite = Callable[[Path, str], Awaitable[None]]


class EditorFiles(LocalFiles):
    """`session.files` served by the editor, in whichever face: the one seam every
    editor read goes through (ACP's and the daemon face's `fs/read_text_file`, the
    daemon face's `files/read`). `read(path)` is the face's request to its client: the
    editor's text of the file (an unsaved buffer included), or a `FileState` when the
    editor also names its document version, or None when the editor has none for it
    (the disk is read then); it raises FileNotFoundError or OSError to fail the read.
    `write(path, text)` sends the whole new text (the edit lands in the editor's undo
    history). A direction without its function stays on the local disk.

    What the editor sends is held to the disk's rules: a text past FILE_CAP characters
    is refused, and a `read` cuts its lines from the text as it cuts a file's. A
    snapshot says `editor` only when the editor served it."""

    def __init__(self, read: EditorRead | None = None, write: EditorWrite | None = None) -> None:
        self.read = read
        self.write = write

    async def editor_state(self, path: Path) -> FileState | None:
        """The editor's text of the file, its version and digest, or None."""
        if self.read is None:
            return None
        shown = await self.read(path)
        if shown is None:
            return None
        text = shown if isinstance(shown, str) else shown.text
        if text is None:
            return None
        if len(text) > FILE_CAP:
            raise OSError(
                f"the editor's text of {path} is {len(text)} characters; whole-file reads "
                f"take at most {FILE_CAP} (ELELEM_FILE_CAP)"
            )
        if isinstance(shown, str):
            return FileState.of(text, editor=True)
        return FileState.of(text, shown.version, editor=True)

    async def editor_text(self, path: Path) -> str | None:
        shown = await self.editor_state(path)
        return None if shown is None else shown.text

    async def snapshot(self, path: Path, errors: str = "strict") -> FileState:
        try:
            shown = await self.editor_state(path)
        except FileNotFoundError:
            return FileState.absent()
        return shown if shown is not None else await self.disk_snapshot(path, errors)

    async def read_text(self, path: Path, errors: str = "strict") -> str:
        text = await self.editor_text(path)
        return text if text is not None else await super().read_text(path, errors)

    async def read_lines(self, path: Path, offset: int, limit: int, cap: int) -> Excerpt:
        text = await self.editor_text(path)
        if text is None:
            return await self.disk_lines(path, offset, limit, cap)
        return excerpt_of_text(text, offset, limit, cap)

    async def write_text(self, path: Path, text: str) -> int:
        if self.write is None:
            return await super().write_text(path, text)
        path.parent.mkdir(parents=True, exist_ok=True)
        await self.write(path, text)
        return len(text.encode("utf-8", "surrogatepass"))
