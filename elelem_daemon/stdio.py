"""Stdio: the daemon's two pipes. stdin is read by a daemon thread (so it never holds
up the exit, and a terminal's stdin is not made non-blocking); stdout gets one write
and flush per message, and a client that went away stops the daemon. Reading stops
while the handlers are behind, so memory stays bounded whatever the client sends."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from typing import BinaryIO

CHUNK = 65536
BUFFERED = 64  # chunks read ahead of the handlers: 4 MiB at most


class Stdout:
    """The writer: one write and flush per message; a lost client stops the daemon."""

    def __init__(self, stream: BinaryIO, lost: Callable[[], None]) -> None:
        self.stream = stream
        self.lost = lost
        self.broken = False

    def write(self, data: bytes) -> None:
        if self.broken:
            return
        try:
            self.stream.write(data)
            self.stream.flush()
        except (OSError, ValueError):
            self.broken = True
            self.lost()

    def close(self) -> None:
        pass


def stdin_chunks(fd: int = 0, buffered: int = BUFFERED) -> Callable[[], Awaitable[bytes]]:
    """Read fd in a daemon thread (it never holds up the exit); b"" at the end.

    At most `buffered` chunks wait to be handled: past that the thread stops reading,
    so a client that writes faster than the daemon answers (or reads) fills its own
    pipe instead of the daemon's memory."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    room = threading.Semaphore(buffered)

    def pump() -> None:
        while True:
            room.acquire()
            try:
                chunk = os.read(fd, CHUNK)
            except OSError:
                chunk = b""
            try:
                loop.call_soon_threadsafe(queue.put_nowait, chunk)
            except RuntimeError:  # the loop is closed
                return
            if not chunk:
                return

    async def get() -> bytes:
        chunk = await queue.get()
        room.release()
        return chunk

    threading.Thread(target=pump, name="elelem-stdin", daemon=True).start()
    return get
