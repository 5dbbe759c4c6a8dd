"""Framing: the Language Server Protocol's base protocol, `Content-Length: N\\r\\n\\r\\n` + body.

Shared by the daemon (reading stdin) and the Python client (reading the daemon's stdout),
and free of pygls. The reader never raises on bad input: it returns a `BadFrame` for a
header block it cannot use, an oversized body or a body cut short by the end of input,
then resynchronises on the next `Content-Length:` header.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..base.jsonsafe import dumps

MAX_BODY = 64 * 1024 * 1024  # a larger frame is refused (and skipped) without being buffered
MAX_LINE = 8 * 1024  # a header line longer than this is junk
MARK = b"content-length:"
HEADER = re.compile(rb"^[A-Za-z0-9][A-Za-z0-9-]*:")


@dataclass(frozen=True)
class BadFrame:
    """A frame that could not be read; `message` says why."""

    message: str


def encode(message: dict[str, Any]) -> bytes:
    """One framed message. ASCII-only JSON, so the header counts bytes and characters alike."""
    body = dumps(message, separators=(",", ":")).encode("ascii")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def cut_short(body: bytes) -> bool:
    """Whether a body that is not JSON is the start of a JSON text: its parse fails
    at the very end, or in a string left open (`{"jsonrpc":"2.0","id":1` and `{"json`
    are cut short; `{bad}` is wrong at once)."""
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        text = exc.doc.rstrip()
        unterminated = exc.msg.startswith("Unterminated string")  # reported at its start
        return bool(text) and (unterminated or exc.pos >= len(text))
    except (ValueError, RecursionError):  # not UTF-8, or nested too deep
        return False
    return False


def _preview(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= 120 else f"{text[:120]}..."


class FrameReader:
    """Reads frames from `read()`, an async source of byte chunks (b"" at end of input)."""

    def __init__(self, read: Callable[[], Awaitable[bytes]], max_body: int = MAX_BODY) -> None:
        self._read = read
        self._buffer = bytearray()
        self._eof = False
        self._quiet = False
        self._skip_next = 0  # the bytes of a refused frame, skipped before the next one
        self.max_body = max_body

    async def frame(self) -> bytes | BadFrame | None:
        """The next body, a BadFrame, or None at the end of input."""
        if self._skip_next:
            await self._skip(self._skip_next)
            self._skip_next = 0
        headers: list[bytes] = []
        while True:
            line = await self._line()
            if line is None:
                return BadFrame("end of input inside a header") if headers else None
            if headers:
                if not line.strip():
                    return await self._body(headers)
                headers.append(line)
                continue
            start = line.lower().find(MARK)
            if start == 0 or (start < 0 and HEADER.match(line)):
                headers.append(line)
            elif start > 0 or line.strip():  # data outside a frame, or glued before a header
                junk = line[:start] if start > 0 else line
                if start > 0:
                    self._buffer[:0] = line[start:] + b"\n"
                if not self._quiet:  # once per run of junk, and not for a bad frame's body
                    self._quiet = True
                    return BadFrame(f"data outside a frame: {_preview(junk)}")

    async def _body(self, headers: list[bytes]) -> bytes | BadFrame:
        lengths = [h.split(b":", 1)[1].strip() for h in headers if h.lower().startswith(MARK)]
        bad = [h for h in headers if not HEADER.match(h)]
        self._quiet = bool(bad or len(lengths) != 1 or not lengths[0].isdigit())
        if self._quiet:  # the body that follows is unreadable: skip it silently
            return BadFrame(f"bad header: {_preview(b' | '.join(headers))}")
        length = int(lengths[0])
        if length > self.max_body:  # answered now, skipped as it arrives
            self._skip_next = length
            return BadFrame(f"message too large: {length} bytes (limit {self.max_body})")
        while len(self._buffer) < length:
            if not await self._fill():
                self._buffer.clear()
                return BadFrame(f"end of input inside a body of {length} bytes")
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body

    def resync(self, body: bytes) -> bool:
        """After a body failed to parse: if it swallowed the start of the next frame
        (its Content-Length was too large), give that part back. True if it did.

        A body that is the start of a JSON text (its Content-Length was too small)
        is followed by the rest of it, which is skipped without an answer up to the
        next header; after a body that is wrong in itself, what follows is read as
        usual (newline-delimited JSON gets its `parse_error`)."""
        start = body.lower().find(MARK, 1)
        if start < 0:
            self._quiet = cut_short(body)  # what follows may be the rest of this body
            return False
        self._buffer[:0] = body[start:]
        return True

    async def _line(self) -> bytes | None:
        """One line without its line break, or None at the end of input."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end]).rstrip(b"\r")
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > MAX_LINE:  # no line break: keep only what may be a header
                start = self._buffer.lower().rfind(MARK)
                keep = start if start >= 0 else len(self._buffer) - len(MARK)
                del self._buffer[:keep]
                if start >= 0 and len(self._buffer) > MAX_LINE:
                    del self._buffer[: len(MARK)]
            if not await self._fill():
                if not self._buffer:
                    return None
                line = bytes(self._buffer).rstrip(b"\r")
                self._buffer.clear()
                return line

    async def _skip(self, count: int) -> None:
        while count > 0:
            if not self._buffer and not await self._fill():
                return
            taken = min(count, len(self._buffer))
            del self._buffer[:taken]
            count -= taken

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read()
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True
