"""Protocol: JSON-RPC 2.0 on stdin/stdout, on pygls's JSON-RPC engine, through its public API.

pygls runs the handlers (one task per request), sends their answers and our own
requests (`send_request`) and matches the client's answers to them. This module adds
what a daemon facing editors needs, through pygls's documented hooks only (the
converter, the writer, `handle_message`, `structure_message`, `msg_id`, `notify`,
`report_server_error`):
- a strict entry (`ElelemProtocol.receive`) for each frame our own reader cuts
  (`framing.FrameReader`, fed by a thread reading fd 0; wiring.py hands the frames
  over), so a bad header, a truncated body, bad JSON or a non-object gets an error
  response and the next good request is still answered (pygls' reader only logs them);
- the running requests (`running`) and our own pending questions (`asked`), kept here:
  `$/cancelRequest` cancels a running handler's task, an id in use is refused, and an
  answer to a question we gave up on is dropped;
- params that stay plain dicts (toolchain.md §3) and are checked by the handlers;
- every message's shape (the converter's hooks, `converter_factory`): key order, no NaN
  or Infinity (`jsonsafe.cleaned`), and every error with `data.kind` (an ElelemError's
  code from the one table, `jsonrpc.errors.CODES`);
- the frame's header: Content-Length alone (`Framed`; pygls adds a Content-Type).
Putting it between the reader, the daemon and stdout, and the exit, are wiring.py's.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from json.encoder import encode_basestring_ascii as escape_ascii  # C, as the encoder uses
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol, default_converter
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)
from pygls.server import JsonRPCServer

from ...base.errors import ElelemError
from ...base.jsonsafe import cleaned, loads, problem
from ...jsonrpc.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    KINDS,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    rpc_error,
)
from ...jsonrpc.shapes import is_id, shape_problem

log = logging.getLogger(__name__)
MAX_MESSAGE = 1000  # error messages are cut here (a 1 MB method name stays out of the reply)
ABANDONED = 1024  # ids of questions given up on, remembered to drop their late answers
CANCELLING = "cancelling"  # `running`'s mark of a request cancelled before its task ran


class Params(dict):  # type: ignore[type-arg]
    """Plain dict params; attribute access only because pygls reads `params.id`."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


class RpcFailure(JsonRpcException):
    """A handler's failure as the error response protocol.md gives it: pygls sends it."""

    def __init__(self, code: int, message: str, kind: str, data: dict[str, Any] | None = None):
        super().__init__(message=message, code=code, data={"kind": kind, **(data or {})})


def failure(exc: BaseException) -> RpcFailure:
    """A handler's exception as its RpcFailure: an ElelemError's from the one table,
    anything else an internal error (logged by the caller)."""
    if isinstance(exc, ElelemError):
        error = rpc_error(exc)
        return RpcFailure(error.code, error.message, exc.kind, exc.data)
    return RpcFailure(
        INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}", "internal_error"
    )


def error_message(
    msg_id: Any, code: int, message: str, kind: str, data: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An error response: `data.kind` always, the message cut at MAX_MESSAGE."""
    if len(message) > MAX_MESSAGE:
        message = f"{message[:MAX_MESSAGE]}..."
    error = {"code": code, "message": message, "data": {"kind": kind, **(data or {})}}
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def plain(value: Any) -> Any:
    """`value`, or a copy without NaN, Infinity or nesting past the bound (jsonsafe)."""
    return value if problem(value) is None else cleaned(value)


def _with_dict_params(obj: dict[str, Any], cls: type) -> Any:
    params = obj.get("params")
    fields = {
        "method": obj["method"],
        "jsonrpc": obj["jsonrpc"],
        "params": Params(params) if isinstance(params, dict) else params,
    }
    return cls(id=obj["id"], **fields) if "id" in obj else cls(**fields)


def _error(message: Any) -> dict[str, Any]:
    """An error response (pygls's, from a handler's RpcFailure or its own), as protocol.md
    shapes it: `data.kind` (the code's kind unless given), no traceback, the message cut."""
    error = message.error
    data = error.data if isinstance(error.data, dict) else {}
    data = {key: value for key, value in data.items() if key != "traceback"}
    kind = data.pop("kind", None) or KINDS.get(error.code, "error")
    return plain(error_message(message.id, error.code, error.message, kind, data))


def converter_factory() -> Any:
    """lsprotocol's converter (pygls's default) with the shapes of our messages."""
    from lsprotocol.types import ResponseErrorMessage

    converter = default_converter()
    converter.register_structure_hook(JsonRPCRequestMessage, _with_dict_params)
    converter.register_structure_hook(JsonRPCNotification, _with_dict_params)
    converter.register_structure_hook(
        JsonRPCResponseMessage,
        lambda obj, cls: cls(id=obj["id"], jsonrpc="2.0", result=obj.get("result")),
    )
    converter.register_unstructure_hook(
        JsonRPCResponseMessage,
        lambda m: {"jsonrpc": "2.0", "id": m.id, "result": plain(m.result)},
    )
    converter.register_unstructure_hook(
        JsonRPCNotification,
        lambda m: {"jsonrpc": "2.0", "method": m.method, "params": plain(m.params)},
    )
    converter.register_unstructure_hook(
        JsonRPCRequestMessage,
        lambda m: {"id": m.id, "method": m.method, "jsonrpc": "2.0", "params": plain(m.params)},
    )
    converter.register_unstructure_hook(ResponseErrorMessage, _error)
    return converter


class Framed:
    """The writer pygls gets: each message's body framed with Content-Length alone."""

    def __init__(self, out: Any) -> None:
        self.out = out

    def write(self, body: bytes) -> None:
        self.out.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


class Handled(logging.Filter):
    """pygls logs a handler's failure with its traceback, and every body it sends (at
    info): a RpcFailure is an answer, not a bug, and a body can be 100 MB."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], RpcFailure):
            return False
        return not str(record.msg).startswith("Sending data")


class ElelemServer(JsonRPCServer):
    def report_server_error(self, error: Exception, source: Any) -> None:
        if not isinstance(error, RpcFailure):  # an answered failure is no server error
            log.error("%s", error)


class ElelemProtocol(JsonRPCProtocol):
    """pygls' JSON-RPC protocol with a strict entry (`receive`) and errors with kinds.

    A request method sent without an id is ignored (a `shutdown` or `session/turn`
    nobody waits for does nothing), and a notification method sent with an id is an
    invalid request (an `exit` meant as a question does not end the daemon)."""

    requests: frozenset[str] = frozenset()  # set by `wiring.register`
    notices: frozenset[str] = frozenset()

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        # a client's request id -> its handler's task (None until it runs)
        self.running: dict[Any, asyncio.Task[Any] | str | None] = {}
        self.asked: set[str] = set()  # our questions' ids, waiting for their answers
        self.abandoned: OrderedDict[str, None] = OrderedDict()
        self.heads: dict[str, tuple[dict[str, Any], str]] = {}

    def set_writer(self, writer: Any, include_headers: bool = False) -> None:
        """The frame's header is `Framed`'s: pygls writes the body alone."""
        super().set_writer(writer, include_headers)

    def receive(self, body: bytes) -> bool:
        """Handle one frame's body; False if it was not JSON (the caller may resync)."""
        try:
            obj = loads(body)  # bounded nesting, no NaN (jsonsafe)
        except ValueError as exc:
            self.send_error(None, PARSE_ERROR, f"parse error: {exc}", "parse_error")
            return False
        if not isinstance(obj, dict):
            what = "a batch (not supported)" if isinstance(obj, list) else type(obj).__name__
            self.send_error(
                None,
                INVALID_REQUEST,
                f"invalid request: expected an object, got {what}",
                "invalid_request",
            )
            return True
        problem = shape_problem(obj)
        msg_id = obj["id"] if is_id(obj.get("id")) else None
        if problem:
            if "method" not in obj and ("result" in obj or "error" in obj):
                log.warning("ignoring a malformed response: %s", problem)  # never answered
            elif "method" in obj and "id" not in obj:
                log.warning("ignoring a malformed notification: %s", problem)  # nor this
            else:
                self.send_error(
                    msg_id, INVALID_REQUEST, f"invalid request: {problem}", "invalid_request"
                )
            return True
        if "method" not in obj:  # an answer to one of our questions
            if msg_id in self.abandoned:
                del self.abandoned[msg_id]  # type: ignore[arg-type]
                log.info("an answer to %r, a question given up on: dropped", msg_id)
                return True
        elif msg_id is not None and (msg_id in self.running or msg_id in self.asked):
            self.send_error(
                msg_id,
                INVALID_REQUEST,
                f"invalid request: id {msg_id!r} is already in use",
                "invalid_request",
            )
            return True
        method = obj.get("method")
        if method in self.requests and "id" not in obj:  # nobody to answer: do nothing
            log.warning("ignoring the request %s sent as a notification (it needs an id)", method)
            return True
        if method in self.notices and msg_id is not None:
            self.send_error(
                msg_id,
                INVALID_REQUEST,
                f"invalid request: {method} is a notification: send it without an id",
                "invalid_request",
            )
            return True
        if method == "$/cancelRequest" and msg_id is None:
            params = obj.get("params")
            self.cancel(params.get("id") if isinstance(params, dict) else None)
            return True
        tracked = method in self.requests and msg_id is not None
        if tracked:
            self.running[msg_id] = None  # its handler's task takes the place when it runs
        try:
            self.handle_message(self.structure_message(obj))
        except Exception:  # a bug: answer it if it was a request, and keep going
            log.exception("could not handle %s", obj.get("method", "a response"))
            if tracked:
                self.running.pop(msg_id, None)
            if "method" in obj and msg_id is not None:
                self.send_error(msg_id, INTERNAL_ERROR, "internal error", "internal_error")
        return True

    def cancel(self, target: Any) -> None:
        """`$/cancelRequest`: cancel the handler of a running request."""
        if not is_id(target) or target not in self.running:
            log.info("$/cancelRequest for no running request: %r", target)
            return
        task = self.running[target]
        if isinstance(task, asyncio.Task):
            task.cancel()
        else:  # its task has not run yet: it stops as it starts
            self.running[target] = CANCELLING

    async def serve(self, msg_id: Any, handler: Any) -> Any:
        """Run a request's handler (`wiring.register`'s, in the task pygls made): its
        failure becomes the error protocol.md says, a cancel included."""
        if self.running.get(msg_id) == CANCELLING:
            self.running.pop(msg_id, None)
            raise cancelled(msg_id)
        self.running[msg_id] = asyncio.current_task()
        try:
            return await handler()
        except asyncio.CancelledError:
            raise cancelled(msg_id) from None
        except JsonRpcException:
            raise
        except Exception as exc:
            if not isinstance(exc, ElelemError):
                log.error("request %r failed", msg_id, exc_info=exc)
            raise failure(exc) from None
        finally:
            self.running.pop(msg_id, None)

    async def ask(self, method: str, params: Any, msg_id: str) -> Any:
        """Our question to the client (pygls's `send_request`); cancelled, the client is
        told (`$/cancelRequest`) and a late answer is dropped (`receive`)."""
        self.asked.add(msg_id)
        try:
            return await asyncio.wrap_future(self.send_request(method, params, msg_id=msg_id))
        except asyncio.CancelledError:  # the turn was cancelled: the question is moot
            self.abandoned[msg_id] = None
            while len(self.abandoned) > ABANDONED:
                self.abandoned.popitem(last=False)
            self.notify("$/cancelRequest", {"id": msg_id})
            raise
        finally:
            self.asked.discard(msg_id)

    # -- sending -----------------------------------------------------------------
    def send_error(
        self, msg_id: Any, code: int, message: str, kind: str, data: dict[str, Any] | None = None
    ) -> None:
        """An error for a frame pygls never saw (`receive` refused it)."""
        if self.writer is not None:
            text = json.dumps(plain(error_message(msg_id, code, message, kind, data)))
            self.writer.write(text.encode())

    def notify_text(self, method: str, params: dict[str, Any], text: str) -> None:
        """`notify(method, {**params, "text": text})`, the same bytes, for a stream of
        deltas (`event/saying`): the body up to the text is encoded once per method, and
        kept while the same `params` object comes (the caller does not change that dict:
        `Events` builds a new one when its session or turn changes)."""
        if self.writer is None:
            return
        kept = self.heads.get(method)
        if kept is None or kept[0] is not params:
            if "text" in params:  # it would not be the last field: the plain path
                self.notify(method, {**params, "text": text})
                return
            try:
                head = json.dumps(
                    {"jsonrpc": "2.0", "method": method, "params": {**params, "text": ""}},
                    allow_nan=False,
                )
            except (ValueError, TypeError, RecursionError):  # the plain path says what
                self.notify(method, {**params, "text": text})
                return
            if len(self.heads) >= 16:  # a few methods stream: a bound, not a cache policy
                self.heads.clear()
            kept = self.heads[method] = (params, head[: -len('""}}')])
        if type(text) is not str:  # a plugin's odd value: the plain path writes what it is
            self.notify(method, {**params, "text": text})
            return
        self.writer.write((kept[1] + escape_ascii(text) + "}}").encode())


def cancelled(msg_id: Any) -> RpcFailure:
    return RpcFailure(REQUEST_CANCELLED, f"request {msg_id!r} was cancelled", "request_cancelled")


logging.getLogger("pygls.protocol.json_rpc").addFilter(Handled())
