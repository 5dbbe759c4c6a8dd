"""The Agent Client Protocol face: `elelem daemon --acp`.

ACP v1 over stdio, one JSON-RPC message per line, so Zed, codecompanion.nvim,
avante.nvim and every other ACP client can drive elelem's sessions. See docs/acp.md.
Only the standard library is imported here: start-up time matters to editors.

It serves until stdin ends (exit 0) or a SIGTERM or SIGHUP (`signals.on_signals`:
the running turns are cancelled and their tools killed, the sessions released, then
exit 128 + N).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

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
    max_frame: int | None = None,
) -> int:
    """Serve until the end of input (0) or a signal (128 + N)."""
    from ...jsonrpc.framing import MAX_BODY
    from ...processes.signals import on_signals
    from .connection import Connection
    from .server import AcpServer

    connection = Connection(write, max_frame or MAX_BODY)
    server = AcpServer(connection, provider, model, store=store)
    stopped: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def stop(code: int) -> None:
        if not stopped.done():
            stopped.set_result(code)

    on_signals(stop)
    serving = asyncio.ensure_future(connection.serve(await stdin_reader()))
    try:
        waited: list[asyncio.Future[Any]] = [serving, stopped]
        await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        if not stopped.done():
            return 0
        await server.stop()  # the turns end (their tools killed) while answers can go out
        serving.cancel()
        await connection.close()
        return stopped.result()
    finally:
        await server.close()


def serve(
    store: Store,
    provider: str | None = None,
    model: str | None = None,
    max_frame: int | None = None,
) -> int:
    """Serve ACP on stdin/stdout until stdin ends or a signal."""
    from ...processes.signals import leave

    write = protocol_stdout()
    try:
        code = asyncio.run(run(write, provider, model, store, max_frame))
    except KeyboardInterrupt:
        return 130
    if code:
        leave(code)  # no thread (a plugin's blocked tool) holds a signalled exit up
    return code
