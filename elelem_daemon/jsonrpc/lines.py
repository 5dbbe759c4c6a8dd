"""Lines: NDJSON framing, one JSON-RPC message per line (ACP's transport).

`lines` splits what it reads in linear time (each chunk is searched once for its
newlines; a line is joined once), and bounds a line by `limit` bytes: a longer one is
not kept but skipped to its end, and comes out as `TooLong`, so the reader can answer
with an error and go on with the next line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..base.jsonsafe import dumps


@dataclass(frozen=True)
class TooLong:
    """A line past the limit, skipped: `size` bytes (without its newline)."""

    size: int
    limit: int

    @property
    def message(self) -> str:
        return f"message too large: {self.size} bytes (limit {self.limit})"


async def lines(
    read: Callable[[], Awaitable[bytes]], limit: int | None = None
) -> AsyncIterator[bytes | TooLong]:
    """Split what `read` returns into lines (b"" from read means end of input); a line
    longer than `limit` bytes is a TooLong, its bytes dropped as they come."""
    buffer = bytearray()
    skipped = -1  # the bytes of the too-long line being skipped, or -1
    while chunk := await read():
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if skipped >= 0:
                yield TooLong(skipped + end - start, limit or 0)
                skipped = -1
            else:
                if buffer:
                    buffer += chunk[start:end]
                    line, buffer = bytes(buffer), bytearray()
                else:
                    line = chunk[start:end]
                if limit is not None and len(line) > limit:
                    yield TooLong(len(line), limit)
                else:
                    yield line
            start = end + 1
        if skipped >= 0:
            skipped += len(chunk) - start
        elif start < len(chunk):
            buffer += chunk[start:] if start else chunk
            if limit is not None and len(buffer) > limit:
                skipped, buffer = len(buffer), bytearray()
    if skipped >= 0:
        yield TooLong(skipped, limit or 0)
    elif buffer.strip():
        yield bytes(buffer)


def line(message: dict[str, Any]) -> bytes:
    """One message as a line: UTF-8 JSON (escaping every newline), never NaN or
    Infinity (jsonsafe.dumps), and `\\n`."""
    body = dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False, separators=(",", ":"))
    return body.encode("utf-8") + b"\n"
