"""Protocol: JSON-RPC 2.0 on stdin/stdout, built on pygls's JSON-RPC engine (lean.py loads it).

pygls runs the handlers (tasks, `$/cancelRequest`, server-to-client requests); this
module adds what a daemon facing editors needs on top:
- a strict entry (`ElelemProtocol.receive`) for each frame our own reader cuts
  (`framing.FrameReader`, fed by a thread reading fd 0; wiring.py hands the frames
  over), so a bad header, a truncated body, bad JSON or a non-object gets an error
  response and the next good request is still answered (pygls' reader only logs them);
- params that stay plain dicts (toolchain.md §3) and are checked by the handlers;
- a `Large` result (`session/load`'s) is encoded in a thread, in pieces, into the
  place in the output it had when its handler returned (spliced.py, `Stdout.reserve`);
- every error carries `data.kind`; an ElelemError's code comes from the one table
  (`jsonrpc.errors.CODES`).
Putting it between the reader, the daemon and stdout, and the exit, are wiring.py's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Future
from json.encoder import encode_basestring_ascii as escape_ascii  # C, as the encoder uses
from typing import TYPE_CHECKING, Any

from ...base.errors import ElelemError
from ...base.jsonsafe import loads
from ...jsonrpc.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    KINDS,
    PARSE_ERROR,
    REQUEST_CANCELLED,
)
from ...jsonrpc.shapes import is_id, shape_problem
from .early import error_message, failure
from .encoding import compact_encoder, plain_encoder
from .lean import load
from .spliced import Large, Raw, frame_chunks
from .stdio import Stdout

ENGINE = load()  # pygls's JSON-RPC modules, without lsprotocol (lean.py)
if TYPE_CHECKING:
    from pygls.exceptions import JsonRpcException
    from pygls.protocol.json_rpc import (
        JsonRPCNotification,
        JsonRPCProtocol,
        JsonRPCRequestMessage,
        JsonRPCResponseMessage,
    )
    from pygls.server import JsonRPCServer
else:
    JsonRpcException = ENGINE.exceptions.JsonRpcException
    JsonRPCNotification = ENGINE.json_rpc.JsonRPCNotification
    JsonRPCProtocol = ENGINE.json_rpc.JsonRPCProtocol
    JsonRPCRequestMessage = ENGINE.json_rpc.JsonRPCRequestMessage
    JsonRPCResponseMessage = ENGINE.json_rpc.JsonRPCResponseMessage
    JsonRPCServer = ENGINE.server.JsonRPCServer

log = logging.getLogger(__name__)


class Params(dict):  # type: ignore[type-arg]
    """Plain dict params; attribute access only because pygls reads `params.id`."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


def _with_dict_params(obj: dict[str, Any], cls: type) -> Any:
    params = obj.get("params")
    fields = {
        "method": obj["method"],
        "jsonrpc": obj["jsonrpc"],
        "params": Params(params) if isinstance(params, dict) else params,
    }
    return cls(id=obj["id"], **fields) if "id" in obj else cls(**fields)


def converter_factory() -> Any:
    converter = ENGINE.converter()
    converter.register_structure_hook(JsonRPCRequestMessage, _with_dict_params)
    converter.register_structure_hook(JsonRPCNotification, _with_dict_params)
    converter.register_structure_hook(
        JsonRPCResponseMessage,
        lambda obj, cls: cls(id=obj["id"], jsonrpc="2.0", result=obj.get("result")),
    )
    return converter


class ElelemProtocol(JsonRPCProtocol):
    """pygls' JSON-RPC protocol with a strict entry (`receive`) and errors with kinds.

    A request method sent without an id is ignored (a `shutdown` or `session/turn`
    nobody waits for does nothing), and a notification method sent with an id is an
    invalid request (an `exit` meant as a question does not end the daemon)."""

    requests: frozenset[str] = frozenset()  # set by `wiring.register`
    notices: frozenset[str] = frozenset()

    _encode: Callable[[Any], str] | None = None
    _plain: Callable[[Any], str] | None = None

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
        if "method" in obj and msg_id is not None and msg_id in self._request_futures:
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
            target = params.get("id") if isinstance(params, dict) else None
            running = self._request_futures.get(target) if is_id(target) else None  # type: ignore[arg-type]
            if isinstance(running, asyncio.Future):  # a handler, not one of our own requests
                self._handle_cancel_notification(target)
            else:
                log.info("$/cancelRequest for no running request: %r", params)
            return True
        try:
            self.handle_message(self.structure_message(obj))
        except Exception:  # a bug: answer it if it was a request, and keep going
            log.exception("could not handle %s", obj.get("method", "a response"))
            if "method" in obj and msg_id is not None:
                self.send_error(msg_id, INTERNAL_ERROR, "internal error", "internal_error")
        return True

    # -- sending -----------------------------------------------------------------
    def send_error(
        self, msg_id: Any, code: int, message: str, kind: str, data: dict[str, Any] | None = None
    ) -> None:
        self._send_data(error_message(msg_id, code, message, kind, data))

    def notify(self, method: str, params: Any | None = None) -> None:
        self._send_data({"jsonrpc": "2.0", "method": method, "params": params})

    _heads: dict[str, tuple[dict[str, Any], str]] | None = None

    def notify_text(self, method: str, params: dict[str, Any], text: str) -> None:
        """`notify(method, {**params, "text": text})`, the same bytes, for a stream of
        deltas (`event/saying`): the frame up to the text is encoded once per method, and
        kept while the same `params` object comes (the caller does not change that dict:
        `Events` builds a new one when its session or turn changes)."""
        if self.writer is None:
            return
        if self._heads is None:
            self._heads = {}
        kept = self._heads.get(method)
        if kept is None or kept[0] is not params:
            if "text" in params:  # it would not be the last field: the plain path
                self.notify(method, {**params, "text": text})
                return
            if self._encode is None:
                self._encode = compact_encoder(self._serialize_message)
            head = self._encode(
                {"jsonrpc": "2.0", "method": method, "params": {**params, "text": ""}}
            )
            if len(self._heads) >= 16:  # a few methods stream: a bound, not a cache policy
                self._heads.clear()
            kept = self._heads[method] = (params, head[: -len('""}}')])
        if type(text) is not str:  # a plugin's odd value: the encoder says what it is
            self.notify(method, {**params, "text": text})
            return
        body = (kept[1] + escape_ascii(text) + "}}").encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def _send_data(self, data: Any) -> None:
        """One frame, from a reused compact encoder (pygls builds one per message and
        logs every body)."""
        if not data or self.writer is None:
            return
        self.writer.write(self._frame(data))

    def _frame(self, data: Any) -> bytes:
        """ASCII JSON, so the header counts bytes and characters alike."""
        if self._encode is None:
            self._encode = compact_encoder(self._serialize_message)
        body = self._encode(data).encode()
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)

    def _send_large(self, message: dict[str, Any]) -> None:
        """A `Large` result's frame (spliced.py): its small values encoded here, its
        lists in a thread, into the place in the output the answer has now; what the
        daemon writes meanwhile waits behind it, so the order is the plain path's. What
        the splice cannot write (NaN, too deep), or a bug, takes the plain path."""
        writer, result = self.writer, message["result"]
        if not isinstance(writer, Stdout):  # a writer with no places to keep
            self._send_data(message)
            return
        if self._plain is None:
            self._plain = plain_encoder(self._serialize_message)
        plain = self._plain
        try:
            parts = {
                key: value if key in result.apart else Raw(plain(value))
                for key, value in result.items()
            }
            work = asyncio.get_running_loop().run_in_executor(
                None, frame_chunks, {**message, "result": parts}, plain
            )
        except (ValueError, RecursionError, RuntimeError):  # NaN...; no loop or threads
            self._send_data(message)
            return
        place = writer.reserve()

        def done(work: asyncio.Future[list[bytes]]) -> None:
            if not work.cancelled() and work.exception() is None:
                writer.fill(place, work.result())
                return
            if not work.cancelled():
                log.info("the answer to %r: the plain path (%r)", message["id"], work.exception())
            try:
                frame = self._frame(message)
            except Exception:  # a bug: answer it, and keep the output going
                log.exception("could not write the answer to %r", message["id"])
                failed = error_message(
                    message["id"], INTERNAL_ERROR, "internal error", "internal_error"
                )
                frame = self._frame(failed)
            writer.fill(place, [frame])

        work.add_done_callback(done)

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: Any | None = None
    ) -> None:
        if error is None:
            message = {"jsonrpc": "2.0", "id": msg_id, "result": result}
            if isinstance(result, Large):
                self._send_large(message)
            else:
                self._send_data(message)
            return
        data = error.data if isinstance(error.data, dict) else {}
        data = {key: value for key, value in data.items() if key != "traceback"}
        kind = data.pop("kind", None) or KINDS.get(error.code, "error")
        self.send_error(msg_id, error.code, error.message, kind, data)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        self._request_futures.pop(msg_id, None)
        if future.cancelled():
            self.send_error(
                msg_id, REQUEST_CANCELLED, f"request {msg_id!r} was cancelled", "request_cancelled"
            )
            return
        exc = future.exception()
        if exc is None:
            self._send_response(msg_id, result=future.result())
        elif isinstance(exc, JsonRpcException):
            self._send_response(msg_id, error=exc.to_response_error())
        else:
            if not isinstance(exc, ElelemError):
                log.error("request %r failed", msg_id, exc_info=exc)
            self.send_error(msg_id, *failure(exc))
