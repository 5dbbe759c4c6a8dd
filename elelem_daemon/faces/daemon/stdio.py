"""Stdio: the daemon's two pipes, and its start. Nothing here imports pygls.

stdin is read by a daemon thread (so it never holds up the exit, and a terminal's
stdin is not made non-blocking); stdout gets one write and flush per pass of the event
loop, and a client that went away stops the daemon. Reading stops while the handlers
are behind, so memory stays bounded whatever the client sends.

`serve` (`elelem daemon`) imports the protocol (pygls, wiring.py) in a thread while the
loop already watches for signals, then `wiring.attach` serves every message.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from ...jsonrpc.framing import MAX_BODY, FrameReader
from ...processes.signals import SIGNALS, on_signals
from ...store.store import Store
from .daemon import Daemon

CHUNK = 65536
BUFFERED = 64  # chunks read ahead of the handlers: 4 MiB at most
PIECES = 64  # frames or pieces written at once past which writev writes them, unjoined
PIPE_SIZE = 1 << 20  # bytes the pipe to the client holds (`widen`)
IOV_MAX = 1024  # pieces per writev (POSIX's least IOV_MAX is 16; Linux and macOS: 1024)


class Stdout:
    """The writer. Frames written in one pass of the event loop go out together, in one
    write and flush when the pass ends: a burst of deltas costs one system call, a lone
    frame waits for nothing. Many frames at once are written with writev, not joined
    first. A lost client stops the daemon."""

    def __init__(self, stream: BinaryIO, lost: Callable[[], None]) -> None:
        self.stream = stream
        self.lost = lost
        self.broken = False
        self._pending: list[bytes] = []
        self._scheduled = False

    def write(self, data: bytes) -> None:
        if self.broken:
            return
        if not self._pending:
            try:
                self._schedule()
            except RuntimeError:  # not on the loop's thread: write now
                self._emit([data])
                return
        self._pending.append(data)

    def _schedule(self) -> None:
        if not self._scheduled:
            asyncio.get_running_loop().call_soon(self.flush)
            self._scheduled = True

    def flush(self) -> None:
        """Write what is pending."""
        self._scheduled = False
        ready, self._pending = self._pending, []
        if ready:
            self._emit(ready)

    def _emit(self, chunks: list[bytes]) -> None:
        try:
            fd = self._fileno() if len(chunks) > PIECES else None
            if fd is not None:
                self.stream.flush()
                writev(fd, chunks)
            else:
                self.stream.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))
                self.stream.flush()
        except (OSError, ValueError):
            self.broken = True
            self._pending.clear()
            self.lost()

    def _fileno(self) -> int | None:
        try:
            return self.stream.fileno()
        except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
            return None

    def close(self) -> None:
        self.flush()


def writev(fd: int, chunks: list[bytes]) -> None:
    """Write every chunk to fd, in order, IOV_MAX at a time (writev may write part)."""
    views: list[bytes | memoryview] = list(chunks)
    at = 0
    while at < len(views):
        written = os.writev(fd, views[at : at + IOV_MAX])
        while at < len(views) and written >= len(views[at]):
            written -= len(views[at])
            at += 1
        if written:
            views[at] = memoryview(views[at])[written:]


class StdioPeer:
    """The `events.Peer` the daemon talks through; `wiring.attach` sets `protocol`
    before any message is read."""

    def __init__(self, stopped: asyncio.Future[int], protocol: Any = None) -> None:
        self.protocol = protocol
        self.stopped = stopped
        self._ids = itertools.count(1)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.protocol.notify(method, params)

    def notify_text(self, method: str, params: dict[str, Any], text: str) -> None:
        """`notify(method, {**params, "text": text})`: a delta (protocol.notify_text)."""
        self.protocol.notify_text(method, params, text)

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await self.protocol.ask(method, params, f"elelem-{next(self._ids)}")

    def stop(self, code: int) -> None:
        if not self.stopped.done():
            self.stopped.set_result(code)


def widen(fd: int, size: int = PIPE_SIZE) -> int | None:
    """Let the pipe to the client hold `size` bytes (Linux's F_SETPIPE_SZ; the default is
    64 KiB), so a large answer goes out in fewer, larger writes and reads: for the
    61 MB session/load's 121 MB answer, ~120 fills of the pipe instead of ~1,900.
    Nothing else changes (the kernel holds at most that much unread); where the system
    refuses (not a pipe, not Linux, past /proc/sys/fs/pipe-max-size) it stays as it is.
    The pipe's size after, or None."""
    import stat

    try:
        import fcntl

        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
        setting = getattr(fcntl, "F_SETPIPE_SZ", None)
        if setting is not None and fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) < size:
            fcntl.fcntl(fd, setting, size)
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) if setting is not None else None
    except (ImportError, OSError):
        return None


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


async def run(
    store: Store,
    provider: str | None = None,
    model: str | None = None,
    stdin: int = 0,
    stdout: BinaryIO | None = None,
    max_frame: int | None = None,
) -> int:
    """Serve until EOF, `exit`, a signal or the client's death; return the exit code."""
    max_frame = max_frame or MAX_BODY
    stopped: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    peer = StdioPeer(stopped)
    writer = Stdout(stdout or sys.stdout.buffer, lambda: peer.stop(0))
    daemon = Daemon(peer, provider, model, max_frame, store=store)
    # from the start: a signal before the first message ends it too (128 + N, as every face)
    on_signals(peer.stop, (*SIGNALS, signal.SIGINT))
    reader = FrameReader(stdin_chunks(stdin), max_frame)
    loading = asyncio.ensure_future(asyncio.to_thread(protocol))  # the loop watches meanwhile
    waits: set[asyncio.Future[Any]] = {loading, stopped}
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    if stopped.done():  # a signal while pygls loaded
        code = await stopped
        await daemon.close()
        writer.flush()
        return code
    attach = loading.result()
    return await attach(daemon, peer, writer, reader)


def protocol() -> Callable[..., Awaitable[int]]:
    """Import the protocol (pygls); `wiring.attach`."""
    from .wiring import attach

    return attach


def serve(
    store: Store,
    provider: str | None = None,
    model: str | None = None,
    max_frame: int | None = None,
) -> int:
    """`elelem daemon`. stdout is the protocol's alone: the protocol writes to a private
    copy of fd 1, and fd 1 itself (what a child process inherits) and `sys.stdout` (a
    plugin's print) become stderr."""
    sys.stdout.flush()
    stdout = open(os.dup(1), "wb")  # lives as long as the process
    widen(stdout.fileno())
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    async def main() -> None:
        code = await run(store, provider, model, 0, stdout, max_frame)
        sys.stderr.flush()
        os._exit(code)  # no thread or stuck tool may hold the exit up

    asyncio.run(main())
    return 0
