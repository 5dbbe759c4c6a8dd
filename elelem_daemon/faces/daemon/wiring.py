"""Wiring: the daemon face's pygls server put together and served until the end.

`attach` is what `stdio.run` calls once pygls has loaded (in a thread): it builds the
pygls server on `protocol.ElelemProtocol`, sets it on the `StdioPeer` and the `Stdout`
writer (through `protocol.Framed`), registers every method of the `Daemon`
(`register`: a request method as an awaited handler run by `ElelemProtocol.serve`, a
notice as a plain call, and both sets on the protocol, which `receive` checks), and
hands each frame of the `FrameReader` to the protocol (`read_loop`). A bug handling a
frame is logged and the next frame is still read.

It serves until EOF, `exit`, a signal or the client's process going away, then
exits within a second: the running turns are cancelled (`Daemon.close`, which kills
their tools' process groups), their responses get `SETTLE` to go out, and the output
is flushed; `attach` returns the exit code.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ...jsonrpc.errors import PARSE_ERROR
from ...jsonrpc.framing import BadFrame, FrameReader
from .daemon import Daemon
from .protocol import ElelemProtocol, ElelemServer, Framed, converter_factory
from .stdio import StdioPeer, Stdout

log = logging.getLogger(__name__)

SETTLE = 0.2  # then how long their responses get to go out: all within a second


async def read_loop(
    reader: FrameReader,
    protocol: ElelemProtocol,
) -> None:
    """Hand each frame to the protocol."""
    frame = await reader.frame()
    while frame is not None:
        try:
            if isinstance(frame, BadFrame):
                protocol.send_error(None, PARSE_ERROR, frame.message, "parse_error")
            elif not protocol.receive(frame):
                reader.resync(frame)
        except Exception:  # a bug must not end the daemon
            log.exception("could not handle a message")
        await asyncio.sleep(0)  # let the handler start before the next message (a cancel)
        frame = await reader.frame()


def register(server: ElelemServer, daemon: Daemon) -> None:
    protocol: ElelemProtocol = server.protocol  # type: ignore[assignment]
    protocol.requests, protocol.notices = frozenset(daemon.requests), frozenset(daemon.notices)
    for method in daemon.requests:
        server.feature(method)(_request(protocol, daemon, method))
    for method in daemon.notices:
        server.feature(method)(_notice(daemon, method))


def _request(
    protocol: ElelemProtocol, daemon: Daemon, method: str
) -> Callable[[Any], Awaitable[Any]]:
    async def handle(params: Any) -> Any:
        return await protocol.serve(protocol.msg_id, lambda: daemon.request(method, params))

    return handle


def _notice(daemon: Daemon, method: str) -> Callable[[Any], None]:
    def handle(params: Any) -> None:
        daemon.notice(method, params)

    return handle


async def attach(
    daemon: Daemon,
    peer: StdioPeer,
    writer: Stdout,
    reader: FrameReader,
) -> int:
    """Put pygls between the reader, the daemon and the writer that `stdio.run` built,
    then serve until EOF, `exit`, a signal or the client's death; return the exit code."""
    server = ElelemServer(ElelemProtocol, converter_factory)
    protocol: ElelemProtocol = server.protocol  # type: ignore[assignment]
    protocol.set_writer(Framed(writer))
    peer.protocol = protocol
    register(server, daemon)
    reading = asyncio.create_task(read_loop(reader, protocol))
    reading.add_done_callback(lambda _: peer.stop(0))
    code = await peer.stopped
    reading.cancel()
    await daemon.close()
    pending = [task for task in protocol.running.values() if isinstance(task, asyncio.Task)]
    if pending:
        await asyncio.wait(pending, timeout=SETTLE)
        await asyncio.sleep(0)  # pygls sends an answer in its task's done callback
    writer.flush()
    return code
