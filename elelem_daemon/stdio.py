"""Stdio: the daemon's two pipes. stdin is read by a daemon thread (so it never holds
up the exit, and a terminal's stdin is not made non-blocking); stdout gets one write
and flush per message, and a client that went away stops the daemon."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from typing import BinaryIO


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


def stdin_chunks(fd: int = 0) -> Callable[[], Awaitable[bytes]]:
    """Read fd in a daemon thread (it never holds up the exit); b"" at the end."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            try:
                loop.call_soon_threadsafe(queue.put_nowait, chunk)
            except RuntimeError:  # the loop is closed
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="elelem-stdin", daemon=True).start()
    return queue.get
