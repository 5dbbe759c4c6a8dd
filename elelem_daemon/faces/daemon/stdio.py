"""Stdio: the daemon's two pipes, and its start. Nothing here imports pygls.

stdin is read by a daemon thread (so it never holds up the exit, and a terminal's
stdin is not made non-blocking); stdout gets one write and flush per pass of the event
loop, and a client that went away stops the daemon. Reading stops while the handlers
are behind, so memory stays bounded whatever the client sends.

`serve` (`elelem daemon`) answers the editor's first requests (`initialize`,
`session/new`) before the JSON-RPC machinery has loaded (pygls's engine, lean.py:
attrs and cattrs; early.py); pygls then loads in a thread while the
client reads them, and `protocol.attach` serves every later message (and any early one
that is not plainly good, errors and all).
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

from ...jsonrpc.framing import MAX_BODY, FrameReader, encode
from ...signals import SIGNALS, on_signals
from ...store.store import Store
from .daemon import Daemon

CHUNK = 65536
BUFFERED = 64  # chunks read ahead of the handlers: 4 MiB at most


class Stdout:
    """The writer. Frames written in one pass of the event loop go out together, in one
    write and flush when the pass ends: a burst of deltas costs one system call, a lone
    frame waits for nothing. A lost client stops the daemon."""

    def __init__(self, stream: BinaryIO, lost: Callable[[], None]) -> None:
        self.stream = stream
        self.lost = lost
        self.broken = False
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if self.broken:
            return
        if not self._pending:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # not on the loop's thread: write now
                self._emit(data)
                return
        self._pending.append(data)

    def flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._emit(data)

    def _emit(self, data: bytes) -> None:
        try:
            self.stream.write(data)
            self.stream.flush()
        except (OSError, ValueError):
            self.broken = True
            self.lost()

    def close(self) -> None:
        self.flush()


class StdioPeer:
    """The `events.Peer` the daemon talks through; `protocol.attach` sets `protocol`.
    Before that (early.py), notifications go straight to `writer`, and a request waits
    for the protocol."""

    def __init__(self, stopped: asyncio.Future[int], protocol: Any = None) -> None:
        self.protocol = protocol
        self.stopped = stopped
        self.writer: Stdout | None = None
        self.attached = asyncio.Event()
        self._ids = itertools.count(1)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        if self.protocol is None and self.writer is not None:
            self.writer.write(encode({"jsonrpc": "2.0", "method": method, "params": params}))
            return
        self.protocol.notify(method, params)

    def notify_text(self, method: str, params: dict[str, Any], text: str) -> None:
        """`notify(method, {**params, "text": text})`: a delta (protocol.notify_text)."""
        if self.protocol is None:
            self.notify(method, {**params, "text": text})
            return
        self.protocol.notify_text(method, params, text)

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        if self.protocol is None:
            await self.attached.wait()
        msg_id = f"elelem-{next(self._ids)}"
        future = self.protocol.send_request(method, params, msg_id=msg_id)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:  # the turn was cancelled: the question is moot
            self.protocol._request_futures.pop(msg_id, None)
            self.protocol.notify("$/cancelRequest", {"id": msg_id})
            raise

    def stop(self, code: int) -> None:
        if not self.stopped.done():
            self.stopped.set_result(code)


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
    peer.writer = writer
    # from the start: a signal before the first message ends it too (128 + N, as every face)
    on_signals(peer.stop, (*SIGNALS, signal.SIGINT))
    reader = FrameReader(stdin_chunks(stdin), max_frame)
    from .early import answer  # the first requests, while pygls loads

    handover = await answer(reader, daemon, writer, stopped)
    if handover is None:  # EOF or `exit` before pygls was needed
        peer.stop(0)
        code = await stopped
        await daemon.close()
        writer.flush()
        return code
    loading, first = handover
    attach = await loading
    return await attach(daemon, peer, writer, reader, first)


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
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    async def main() -> None:
        code = await run(store, provider, model, 0, stdout, max_frame)
        sys.stderr.flush()
        os._exit(code)  # no thread or stuck tool may hold the exit up

    asyncio.run(main())
    return 0
