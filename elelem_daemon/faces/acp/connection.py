"""Connection: JSON-RPC 2.0 as ACP carries it, one JSON object per line on stdio
(`jsonrpc.lines`).

Requests run as tasks, so a long `session/prompt` never blocks the `session/cancel`
behind it, nor the editor's answers to our own requests (`fs/*`, permissions).
`$/cancel_request {requestId}` cancels a running request.

A line is bounded as the daemon's frames are (`max_frame`: `--max-frame`,
`ELELEM_MAX_FRAME`, 64 MiB by default): a longer one is skipped as it arrives and
answered with a parse error (`message too large: N bytes (limit L)`), and the next
line is served. A line nested deeper than `jsonsafe.MAX_DEPTH`, or holding `NaN` or
`Infinity`, is a parse error too (jsonsafe.loads), never a crash.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ...base.errors import ElelemError
from ...base.jsonsafe import loads
from ...jsonrpc import lines as ndjson
from ...jsonrpc.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RpcError,
    invalid_params,
    rpc_error,
)
from ...jsonrpc.framing import MAX_BODY

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[Any]]
Write = Callable[[bytes], None]


class Connection:
    def __init__(self, write: Write, max_frame: int = MAX_BODY) -> None:
        self._write = write
        self.max_frame = max_frame
        self.requests: dict[str, Handler] = {}
        self.notifications: dict[str, Handler] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self.closed = False

    # -- sending ----------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        self._write(ndjson.line(message))

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Ask the client; return its result or raise RpcError (ConnectionError once closed)."""
        if self.closed:
            raise ConnectionError("the client has gone")
        self._next_id += 1
        ident = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            self.send({"id": ident, "method": method, "params": params})
            return await future
        except asyncio.CancelledError:  # our turn was cancelled: the client may stop asking
            self.notify("$/cancel_request", {"requestId": ident})
            raise
        finally:
            self._pending.pop(ident, None)

    # -- receiving --------------------------------------------------------------
    async def serve(self, read: Callable[[], Awaitable[bytes]]) -> None:
        """Dispatch every line until end of input; then cancel what still runs."""
        async for received in ndjson.lines(read, self.max_frame):
            if isinstance(received, ndjson.TooLong):
                self._parse_error(received.message)
            elif received.strip():
                self.receive(received)
        await self.close()

    async def close(self) -> None:
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the client has gone"))
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=2)

    def receive(self, line: bytes) -> None:
        try:
            message = loads(line)
        except ValueError as exc:
            self._parse_error(f"parse error: {exc}")
            return
        if not isinstance(message, dict):
            self._invalid(None, "a message must be a JSON object")
        elif message.get("jsonrpc") != "2.0":
            self._invalid(message.get("id"), 'jsonrpc must be "2.0"')
        elif "method" in message:
            self._call(message)
        elif "id" in message and ("result" in message or "error" in message):
            self._answer(message)
        else:
            self._invalid(message.get("id"), "neither a request, a notification nor a response")

    def _parse_error(self, why: str) -> None:
        self.send({"id": None, "error": RpcError(PARSE_ERROR, why).to_dict()})

    def _invalid(self, ident: Any, why: str) -> None:
        if not isinstance(ident, str | int):
            ident = None
        self.send({"id": ident, "error": RpcError(INVALID_REQUEST, why).to_dict()})

    def _call(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params", {})
        is_request = "id" in message
        ident = message.get("id")
        if not isinstance(method, str) or (is_request and not isinstance(ident, str | int)):
            self._invalid(
                ident if is_request else None, "method must be a string, id a string or number"
            )
            return
        if params is None:
            params = {}
        if not is_request:
            self._notified(method, params)
            return
        key = json.dumps(ident)
        if key in self._running:
            self._invalid(ident, f"request id {key} is already in use")
            return
        task = asyncio.create_task(self._respond(ident, method, params))
        self._running[key] = task

        def done(task: asyncio.Task[None]) -> None:
            self._running.pop(key, None)
            if task.cancelled():  # cancelled before it ran: _respond could not answer
                self.send(
                    {"id": ident, "error": RpcError(REQUEST_CANCELLED, "cancelled").to_dict()}
                )

        task.add_done_callback(done)

    def _notified(self, method: str, params: Any) -> None:
        if method == "$/cancel_request":
            ident = params.get("requestId") if isinstance(params, dict) else None
            task = self._running.get(json.dumps(ident))
            if task is not None:
                task.cancel()
            return
        handler = self.notifications.get(method)
        if handler is None:
            log.info("acp: ignoring notification %s", method)
            return
        if not isinstance(params, dict):
            log.warning("acp: %s: params must be an object", method)
            return

        async def run() -> None:
            try:
                await handler(params)
            except Exception as exc:
                log.warning("acp: notification %s failed: %s", method, exc)

        task = asyncio.create_task(run())
        self._running[f"notification:{id(task)}"] = task
        task.add_done_callback(lambda _: self._running.pop(f"notification:{id(task)}", None))

    async def _respond(self, ident: Any, method: str, params: Any) -> None:
        try:
            handler = self.requests.get(method)
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}", {"method": method})
            if not isinstance(params, dict):
                raise invalid_params("params must be an object")
            result = await handler(params)
        except RpcError as exc:
            self.send({"id": ident, "error": exc.to_dict()})
        except ElelemError as exc:  # the one code table (jsonrpc.errors)
            self.send({"id": ident, "error": rpc_error(exc).to_dict()})
        except asyncio.CancelledError:
            self.send({"id": ident, "error": RpcError(REQUEST_CANCELLED, "cancelled").to_dict()})
        except Exception as exc:
            log.exception("acp: %s failed", method)
            self.send({"id": ident, "error": RpcError(INTERNAL_ERROR, str(exc)).to_dict()})
        else:
            self.send({"id": ident, "result": result})

    def _answer(self, message: dict[str, Any]) -> None:
        ident = message["id"]
        future = self._pending.get(ident) if isinstance(ident, int) else None
        if future is None or future.done():
            log.info("acp: ignoring a response to unknown request %r", ident)
            return
        error = message.get("error")
        if error is not None:
            future.set_exception(RpcError.received(error))
        else:
            future.set_result(message.get("result"))
