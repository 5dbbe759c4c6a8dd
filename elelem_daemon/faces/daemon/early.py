"""Early: the editor's first requests, answered before pygls has loaded. No pygls here.

Importing pygls's JSON-RPC engine (lean.py: without lsprotocol, whose ~550 attrs
classes cost ~0.4 s more) still costs attrs and cattrs, tens of milliseconds: as
much as everything else the daemon does before a session is ready. So `answer`
serves, one at a time, what an editor sends first: the `initialize` and
`session/new` requests and the `initialized` and `exit` notifications. pygls is
imported in a thread (`load`) once the first session is answered, once the client
has been quiet for `IDLE`, or as soon as a frame comes that this path does not take;
that frame, and every later one, is `wiring.attach`'s.

The answers are the protocol's own: the same handlers (`Daemon.request`), the same
error shapes (`error_message`, `failure`, which protocol.py uses too). A frame that is
not plainly one of the messages above (bad JSON, a wrong shape, a request without an
id, non-object params) is left to the protocol, which answers it as it would at any
other time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...base.errors import ElelemError
from ...base.jsonsafe import loads
from ...jsonrpc.errors import INTERNAL_ERROR, rpc_error
from ...jsonrpc.framing import BadFrame, FrameReader, encode
from ...jsonrpc.shapes import is_id, shape_problem
from .daemon import Daemon

if TYPE_CHECKING:
    from .stdio import Stdout

log = logging.getLogger(__name__)

REQUESTS = frozenset({"initialize", "session/new"})
NOTICES = frozenset({"initialized", "exit"})
IDLE = 0.05  # seconds of a quiet client after which pygls starts loading anyway
MAX_MESSAGE = 1000  # error messages are cut here (a 1 MB method name stays out of the reply)

Frame = bytes | BadFrame | None
Loading = asyncio.Future[Any]


def error_message(
    msg_id: Any, code: int, message: str, kind: str, data: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An error response: `data.kind` always, the message cut at MAX_MESSAGE."""
    if len(message) > MAX_MESSAGE:
        message = f"{message[:MAX_MESSAGE]}..."
    error = {"code": code, "message": message, "data": {"kind": kind, **(data or {})}}
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def failure(exc: BaseException) -> tuple[int, str, str, dict[str, Any]]:
    """A handler's exception as (code, message, kind, data): an ElelemError's from the one
    table, anything else an internal error (logged by the caller)."""
    if isinstance(exc, ElelemError):
        error = rpc_error(exc)
        return error.code, error.message, exc.kind, exc.data
    return INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}", "internal_error", {}


def load() -> Loading:
    """Import the protocol (pygls) in a thread; the future's result is `wiring.attach`."""

    def imported() -> Any:
        from .wiring import attach

        return attach

    return asyncio.ensure_future(asyncio.to_thread(imported))


def takes(frame: Frame) -> dict[str, Any] | None:
    """The message, if this path answers it; None leaves the frame to the protocol."""
    if not isinstance(frame, bytes):
        return None
    try:
        message = loads(frame)  # the wire's rules: bounded nesting, no NaN
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or shape_problem(message):
        return None
    if not isinstance(message.get("params", {}), dict):
        return None
    method = message.get("method")
    if method in REQUESTS:
        return message if is_id(message.get("id")) else None
    return message if method in NOTICES and "id" not in message else None


async def handle(message: dict[str, Any], daemon: Daemon, writer: Stdout) -> None:
    method, params = message["method"], message.get("params")
    if "id" not in message:
        daemon.notice(method, params)
        return
    msg_id = message["id"]
    try:
        result = await daemon.request(method, params)
    except Exception as exc:
        if not isinstance(exc, ElelemError):
            log.error("request %r failed", msg_id, exc_info=exc)
        writer.write(encode(error_message(msg_id, *failure(exc))))
        return
    writer.write(encode({"jsonrpc": "2.0", "id": msg_id, "result": result}))


async def answer(
    reader: FrameReader,
    daemon: Daemon,
    writer: Stdout,
    stopped: asyncio.Future[int],
    start: Callable[[], Loading] = load,
) -> tuple[Loading, asyncio.Future[Frame]] | None:
    """Serve the early messages. Returns the loading protocol and the first frame it must
    handle (maybe still to come), or None when the daemon stops first (EOF, `exit`)."""
    loading: Loading | None = None
    pending: asyncio.Future[Frame] = asyncio.ensure_future(reader.frame())
    while True:
        waits: set[asyncio.Future[Any]] = {pending, stopped}
        if loading is not None:
            waits.add(loading)
        done, _ = await asyncio.wait(
            waits, timeout=None if loading else IDLE, return_when=asyncio.FIRST_COMPLETED
        )
        if stopped.done():
            pending.cancel()
            return None
        if not done:  # a quiet client: load pygls while it is quiet
            loading = start()
            continue
        if loading is not None and loading.done():
            return loading, pending
        if not pending.done():
            continue
        frame = pending.result()
        if frame is None:
            return None
        message = takes(frame)
        if message is None:
            return loading or start(), pending
        await handle(message, daemon, writer)
        writer.flush()  # out before the import thread contends for the interpreter
        if loading is None and message["method"] == "session/new":
            loading = start()
        pending = asyncio.ensure_future(reader.frame())
