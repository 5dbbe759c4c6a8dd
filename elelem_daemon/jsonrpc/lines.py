"""Lines: NDJSON framing, one JSON-RPC message per line (ACP's transport)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any


async def lines(read: Callable[[], Awaitable[bytes]]) -> AsyncIterator[bytes]:
    """Split what `read` returns into lines (b"" from read means end of input)."""
    buffer = b""
    while chunk := await read():
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            yield line
    if buffer.strip():
        yield buffer


def line(message: dict[str, Any]) -> bytes:
    """One message as a line: UTF-8 JSON (json.dumps escapes every newline) and `\\n`."""
    body = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False, separators=(",", ":"))
    return body.encode("utf-8") + b"\n"
