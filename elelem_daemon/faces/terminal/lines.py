"""LineReader: stdin line by line, for scripts (`elelem chat -`, a pipe, a file).

A pipe or a terminal is read from the event loop (`add_reader`), so a pending read
never holds a thread that would keep the process alive after Ctrl-C; a regular file
(which cannot block) or any other stream is read directly. A line longer than
MAX_LINE bytes comes in pieces of that size. Bytes are decoded as UTF-8 with
replacement, and the newline is not part of the line.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import TextIO

MAX_LINE = 4 << 20
CHUNK = 65536


class LineReader:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._buffer = bytearray()
        self._eof = False

    def _fd(self) -> int | None:
        """The descriptor to watch, if the stream is a pipe, a socket or a terminal."""
        try:
            fd = self.stream.fileno()
            mode = os.fstat(fd).st_mode
        except (AttributeError, OSError, ValueError):
            return None
        return fd if not stat.S_ISREG(mode) else None

    async def readline(self) -> str | None:
        """The next line, or None at the end of the input."""
        fd = self._fd()
        if fd is None:
            text = self.stream.readline(MAX_LINE)
            return text.removesuffix("\n") if text else None
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0 or len(self._buffer) >= MAX_LINE or (self._eof and self._buffer):
                cut = end if 0 <= end < MAX_LINE else min(len(self._buffer), MAX_LINE)
                line = bytes(self._buffer[:cut]).decode("utf-8", "replace")
                del self._buffer[: cut + (1 if cut == end else 0)]
                return line
            if self._eof:
                return None
            chunk = await _read(fd)
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True


async def _read(fd: int) -> bytes:
    """One read of fd once it is readable (the loop watches it meanwhile)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, readable)
    except PermissionError:  # a regular file or /dev/null: epoll cannot watch it, and
        return await asyncio.to_thread(_read_now, fd)  # a read of it never blocks long
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    try:
        return os.read(fd, CHUNK)
    except BlockingIOError:
        return await _read(fd)
    except OSError:  # e.g. EIO: the terminal went away
        return b""


def _read_now(fd: int) -> bytes:
    try:
        return os.read(fd, CHUNK)
    except OSError:
        return b""


def first_line(prompt: str) -> str:
    """One line read before the REPL starts (the session picker), taking no byte past
    its newline from a pipe, so the REPL's LineReader gets the rest."""
    print(prompt, end="", flush=True)
    if os.isatty(0):
        return input()
    line = bytearray()
    while len(line) < MAX_LINE and (byte := os.read(0, 1)) and byte != b"\n":
        line += byte
    return line.decode("utf-8", "replace")
