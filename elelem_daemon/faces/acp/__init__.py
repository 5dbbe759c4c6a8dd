"""The Agent Client Protocol face: `elelem daemon --acp`.

ACP v1 over stdio, one JSON-RPC message per line, so Zed, codecompanion.nvim,
avante.nvim and every other ACP client can drive elelem's sessions. See docs/acp.md.
Only the standard library is imported here: start-up time matters to editors.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...store.store import Store


def protocol_stdout() -> Callable[[bytes], None]:
    """Keep fd 1 for the protocol alone: anything else printing to stdout goes to stderr."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    lock = threading.Lock()  # a plugin's sync tool runs in a thread and may print

    def write(data: bytes) -> None:
        view = memoryview(data)
        with lock:
            while view:
                view = view[os.write(fd, view) :]

    return write


async def stdin_reader() -> Callable[[], Awaitable[bytes]]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except (ValueError, OSError):  # a regular file: read it in a thread
        return lambda: asyncio.to_thread(os.read, sys.stdin.fileno(), 65536)
    return lambda: reader.read(65536)


async def run(
    write: Callable[[bytes], None],
    provider: str | None,
    model: str | None,
    store: Store,
) -> int:
    from .connection import Connection
    from .server import AcpServer

    connection = Connection(write)
    server = AcpServer(connection, provider, model, store=store)
    try:
        await connection.serve(await stdin_reader())
    finally:
        await server.close()
    return 0


def serve(store: Store, provider: str | None = None, model: str | None = None) -> int:
    """Serve ACP on stdin/stdout until stdin ends."""
    write = protocol_stdout()
    try:
        return asyncio.run(run(write, provider, model, store))
    except KeyboardInterrupt:
        return 130
