"""HTTP/1.1 as the lean transport reads it (transport.py): one connection's bytes
(`Conn`), a response's head (`parse_head`) and a chunked body (`Chunked`). The server's
bytes are hostile: everything is bounded, anything malformed is a `ProtocolError`, which
the transport turns into httpx's `RemoteProtocolError` (a stream that broke off).

Bounds: a response head of at most MAX_HEAD bytes and MAX_HEADERS fields; a chunk-size
line of at most MAX_SIZE_LINE bytes (hex digits, at most 16, then extensions); trailers
of at most MAX_HEAD bytes, MAX_TRAILER_LINE each (what waits for its line end is held,
so these bounds also keep a server that sends one byte at a time linear). The body's
total is the reader's business (lines.py's ELELEM_MAX_REPLY).
"""

from __future__ import annotations

import asyncio
import re

MAX_HEAD = 64 * 1024
MAX_HEADERS = 100
MAX_SIZE_LINE = 1024
CAPACITY = 256 * 1024  # bytes received before the socket is paused
WRITE_PIECE = 64 * 1024  # a request is written in pieces, each within the write timeout
MAX_TRAILER_LINE = 8192

STATUS = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: ([^\x00-\x08\x0a-\x1f\x7f]*))?")
FIELD = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([^\x00-\x08\x0a-\x1f\x7f]*?)[ \t]*")
HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
DIGITS = re.compile(rb"[0-9]{1,18}")


class ProtocolError(Exception):
    """The server broke HTTP/1.1 (or a bound)."""


class Timeout(Exception):
    """No bytes came within the read timeout."""


class Conn(asyncio.BufferedProtocol):
    """One connection: what arrived (`read` takes all of it at once, received straight
    into one buffer of CAPACITY bytes, the socket paused while it is full), the end, the
    error, and flow control both ways. A read's timeout is one timer per connection,
    moved on only when it fires (not one timer per read)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.space = bytearray(CAPACITY)
        self.view = memoryview(self.space)
        self.filled = 0
        self.leftover = b""
        self.eof = False
        self.error: Exception | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.paused = False
        self.drained: asyncio.Future[None] | None = None
        self.idle_since = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.since = 0.0  # when the pending read started waiting
        self.timeout: float | None = None

    # -- asyncio's side ---------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.view[self.filled :]

    def buffer_updated(self, nbytes: int) -> None:
        self.filled += nbytes
        if self.filled >= CAPACITY and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        if self.timer is not None:
            self.timer.cancel()

    def pause_writing(self) -> None:
        self.drained = self.loop.create_future()

    def resume_writing(self) -> None:
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        self.drained = None

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    # -- ours ---------------------------------------------------------------------
    @property
    def usable(self) -> bool:
        """Idle and still open: nothing arrived since the last answer, no end."""
        return not (
            self.eof
            or self.filled
            or self.leftover
            or self.transport is None
            or self.transport.is_closing()
        )

    async def read(self, timeout: float | None) -> bytes:
        """All the bytes that arrived (waiting for some), or b"" at the end."""
        if self.leftover:
            data, self.leftover = self.leftover, b""
            return data
        if not self.filled and not self.eof:
            waiter = self.waiter = self.loop.create_future()
            if timeout is not None:
                self.since, self.timeout = self.loop.time(), timeout
                timer = self.timer
                if timer is None or timer.when() > self.since + timeout:  # a shorter one
                    if timer is not None:
                        timer.cancel()
                    self.timer = self.loop.call_later(timeout, self._check)
            try:
                await waiter
            finally:
                self.waiter = None
            if not self.filled and not self.eof:
                raise Timeout()
        if not self.filled:
            if self.error is not None:
                raise self.error
            return b""
        data = bytes(self.view[: self.filled])
        self.filled = 0
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data

    def _check(self) -> None:
        """The timer fired: a read waiting since `since` for `timeout` is over; one that
        started later gets the timer moved to its own end."""
        self.timer = None
        if self.waiter is None or self.waiter.done() or self.timeout is None:
            return
        left = self.since + self.timeout - self.loop.time()
        if left > 0:
            self.timer = self.loop.call_later(left, self._check)
        else:
            self.waiter.set_result(None)

    async def write(self, data: bytes, timeout: float | None) -> None:
        if self.transport is None or self.transport.is_closing():
            raise ConnectionResetError("the connection is closed")
        for start in range(0, len(data), WRITE_PIECE):  # the timeout bounds each piece, as
            self.transport.write(data[start : start + WRITE_PIECE])  # httpx's does
            if self.drained is not None:
                async with asyncio.timeout(timeout):  # never wait_for: it can lose a cancel
                    await asyncio.shield(self.drained)
            if self.error is not None:
                raise self.error

    def unread(self, data: bytes) -> None:
        self.leftover = data + self.leftover

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.transport is not None:
            self.transport.abort()


def parse_head(data: bytes) -> tuple[int, bytes, bytes, list[tuple[bytes, bytes]]]:
    """Status, HTTP minor version, reason and fields of a head (its final blank line
    excluded)."""
    lines = data.split(b"\r\n")
    status = STATUS.fullmatch(lines[0])
    if status is None:
        raise ProtocolError(f"malformed status line {lines[0][:80]!r}")
    fields = parse_fields(lines[1:])
    return int(status[2]), status[1], status[3] or b"", fields


def parse_fields(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    if len(lines) > MAX_HEADERS:
        raise ProtocolError(f"more than {MAX_HEADERS} header fields")
    fields = []
    for line in lines:
        found = FIELD.fullmatch(line)
        if found is None:
            raise ProtocolError(f"malformed header line {line[:80]!r}")
        fields.append((found[1], found[2]))
    return fields


def body_length(fields: list[tuple[bytes, bytes]]) -> int | None:
    """The body's framing: -1 chunked, its length, or None (until the server closes)."""
    coding = [v for k, v in fields if k.lower() == b"transfer-encoding"]
    if coding:
        codings = [c.strip().lower() for c in b",".join(coding).split(b",")]
        if codings != [b"chunked"]:
            raise ProtocolError(f"unsupported transfer-encoding {b','.join(coding)[:80]!r}")
        return -1
    lengths = {v.strip() for k, v in fields if k.lower() == b"content-length"}
    if not lengths:
        return None
    if len(lengths) > 1 or DIGITS.fullmatch(next(iter(lengths))) is None:
        raise ProtocolError(f"bad content-length {b','.join(sorted(lengths))[:80]!r}")
    return int(next(iter(lengths)))


SIZE, DATA, CRLF, TRAILER, DONE = range(5)


class Chunked:
    """A chunked body, fed each read: `feed` answers the data the read completes, as
    one piece however many chunks it held; `done` once the last chunk and the trailers
    came; `extra` says bytes came after them."""

    def __init__(self) -> None:
        self.pending = b""
        self.state = SIZE
        self.left = 0
        self.trailers = 0
        self.extra = False

    @property
    def done(self) -> bool:
        return self.state == DONE

    def feed(self, data: bytes) -> bytes:
        buf = self.pending + data if self.pending else data
        pos, end, out, state = 0, len(buf), [], self.state
        while pos < end:
            if state == DATA:
                take = min(self.left, end - pos)
                out.append(buf[pos : pos + take])
                pos += take
                self.left -= take
                if not self.left:
                    state = CRLF
            elif state == CRLF:
                if end - pos < 2:
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise ProtocolError("a chunk did not end with CRLF")
                pos, state = pos + 2, SIZE
            elif state == SIZE:
                eol = buf.find(b"\r\n", pos, pos + MAX_SIZE_LINE + 2)
                if eol < 0:
                    if end - pos > MAX_SIZE_LINE:
                        raise ProtocolError(f"a chunk-size line passed {MAX_SIZE_LINE} bytes")
                    break
                size = buf[pos:eol].split(b";", 1)[0].strip(b" \t")
                if HEX.fullmatch(size) is None:
                    raise ProtocolError(f"bad chunk size {buf[pos:eol][:40]!r}")
                pos, self.left = eol + 2, int(size, 16)
                state = DATA if self.left else TRAILER
            elif state == TRAILER:
                eol = buf.find(b"\r\n", pos, pos + MAX_TRAILER_LINE + 2)
                if eol < 0:
                    if end - pos > MAX_TRAILER_LINE:
                        raise ProtocolError(f"a trailer line passed {MAX_TRAILER_LINE} bytes")
                    break
                self.trailers += eol + 2 - pos
                if self.trailers > MAX_HEAD:
                    raise ProtocolError(f"the trailers passed {MAX_HEAD} bytes")
                if eol == pos:
                    state = DONE
                else:
                    parse_fields([buf[pos:eol]])
                pos = eol + 2
            else:
                self.extra = True
                break
        self.state = state
        self.pending = buf[pos:] if state != DONE else b""
        return out[0] if len(out) == 1 else b"".join(out)
