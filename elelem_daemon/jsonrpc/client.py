"""A small async client for the daemon: spawns `python -m elelem_daemon` and speaks
protocol.md over its stdin/stdout. Scripts and the end-to-end tests use it.

    async with await Client.spawn("--provider", "stub") as client:
        await client.initialize()
        session = await client.new_session()
        result = await client.turn(session["sessionId"], "hello", on_event=print)

Questions the daemon asks (`input/ask`) go to `on_ask(params) -> str | None`; without
one the client does not declare the capability. Any other request from the daemon
(`fs/read_text_file`, `files/read`, `files/propose`) goes to `handlers[method](params)`
(`on_request` fills it), whose return value is the result (an RpcError it raises is
the error answered); the capabilities that go with them are the client's to declare
(`initialize(fs=..., files=...)`).
stderr is inherited unless told otherwise, never left in an undrained pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from .errors import RpcError
from .framing import BadFrame, FrameReader, encode

RpcMessage = dict[str, Any]
Ask = Callable[[RpcMessage], Awaitable[str | None] | str | None]
Handler = Callable[[Any], Any]
_DONE = object()


class Turn:
    """A `session/turn` in flight: its notifications as they arrive, then its result."""

    def __init__(
        self, client: Client, session_id: str, request_id: int, future: asyncio.Future[Any]
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.id = request_id
        self.future = future
        self._queue: asyncio.Queue[Any] = asyncio.Queue()

    def _event(self, message: RpcMessage) -> None:
        self._queue.put_nowait(message)

    def _finish(self) -> None:
        self._queue.put_nowait(_DONE)

    async def events(self) -> AsyncIterator[RpcMessage]:
        """Each notification `{method, params}` of this turn, in order, until its response."""
        while (message := await self._queue.get()) is not _DONE:
            yield message

    async def result(self) -> RpcMessage:
        return await self.future

    def __await__(self) -> Any:
        return self.future.__await__()

    async def cancel(self) -> None:
        """`session/cancel`: the turn ends with stopReason `cancelled`."""
        await self.client.cancel(self.session_id)

    async def cancel_request(self) -> None:
        """`$/cancelRequest` on this turn's request id: the same, the LSP way."""
        await self.client.notify("$/cancelRequest", {"id": self.id})


class Client:
    def __init__(
        self,
        process: asyncio.subprocess.Process,
        on_ask: Ask | None = None,
        on_request: dict[str, Handler] | None = None,
    ) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.on_ask = on_ask
        self.trace: list[tuple[str, RpcMessage]] | None = None  # a list: every message kept
        self.notifications: list[RpcMessage] = []  # every notification, in order
        self.errors: asyncio.Queue[RpcError] = asyncio.Queue()  # error responses without id
        self.bad_frames: list[str] = []  # what on the daemon's stdout was not a message
        self.on_notification: Callable[[RpcMessage], Any] | None = None
        # other requests from the daemon (`fs/read_text_file`, `files/read`,
        # `files/propose`): method -> handler(params), whose value is the result; an
        # RpcError it raises is the error response
        self.handlers: dict[str, Handler] = dict(on_request or {})
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self._turns: dict[Any, Turn] = {}
        self._listeners: dict[str, Turn] = {}
        self._asks: dict[Any, asyncio.Task[None]] = {}
        self._lock = asyncio.Lock()
        stdout = process.stdout
        self._reader = FrameReader(lambda: stdout.read(65536))
        self._reading = asyncio.create_task(self._read())

    @classmethod
    async def spawn(
        cls,
        *args: str,
        command: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: Any = None,
        on_ask: Ask | None = None,
        on_request: dict[str, Handler] | None = None,
    ) -> Client:
        """Start the daemon (`python -m elelem_daemon ARGS`, or `command`)."""
        argv = list(command or [sys.executable, "-m", "elelem_daemon"]) + list(args)
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=cwd,
            limit=1 << 20,
        )
        return cls(process, on_ask, on_request)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- JSON-RPC ------------------------------------------------------------------
    async def write_raw(self, data: bytes) -> None:
        """Send bytes as they are (for tests of malformed input)."""
        async with self._lock:
            assert self.process.stdin is not None
            self.process.stdin.write(data)
            await self.process.stdin.drain()

    async def send(self, message: RpcMessage) -> None:
        if self.trace is not None:
            self.trace.append(("-->", message))
        await self.write_raw(encode(message))

    async def notify(self, method: str, params: Any = None) -> None:
        message: RpcMessage = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    def _start(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any], RpcMessage]:
        msg_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        message: RpcMessage = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        return msg_id, future, message

    async def send_as_is(self, message: RpcMessage) -> Any:
        """Send a message dict unchecked (malformed on purpose) and await the response to
        its `id`; an error response raises RpcError."""
        future = asyncio.get_running_loop().create_future()
        self._pending[message["id"]] = future
        await self.send(message)
        return await future

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and return its result; an error response raises RpcError."""
        _, future, message = self._start(method, params)
        await self.send(message)
        return await future

    # -- the daemon's methods ----------------------------------------------------------
    async def initialize(
        self,
        process_id: int | None = None,
        client_info: RpcMessage | None = None,
        **capabilities: Any,
    ) -> RpcMessage:
        """Declares `input.ask` when `on_ask` was given; `capabilities` go beside it
        (`editorState=True`)."""
        params: RpcMessage = {
            "clientInfo": client_info or {"name": "elelem_daemon.client"},
            "capabilities": {"input": {"ask": self.on_ask is not None}, **capabilities},
        }
        if process_id is not None:
            params["processId"] = process_id
        return await self.request("initialize", params)

    async def new_session(self, **params: Any) -> RpcMessage:
        """`cwd`, `provider`, `model`, `trusted`, `mcpServers`: all optional."""
        return await self.request("session/new", params)

    async def start_turn(
        self, session_id: str, text: str, attachments: list[RpcMessage] | None = None
    ) -> Turn:
        """Send `session/turn`; iterate `turn.events()`, then `await turn`."""
        params: RpcMessage = {"sessionId": session_id, "text": text}
        if attachments is not None:
            params["attachments"] = attachments
        msg_id, future, message = self._start("session/turn", params)
        turn = Turn(self, session_id, msg_id, future)
        self._turns[msg_id] = self._listeners[session_id] = turn
        await self.send(message)
        return turn

    async def turn(
        self,
        session_id: str,
        text: str,
        on_event: Callable[[RpcMessage], Any] | None = None,
        attachments: list[RpcMessage] | None = None,
    ) -> RpcMessage:
        """Run one turn; `on_event(notification)` sees each event as it comes."""
        turn = await self.start_turn(session_id, text, attachments)
        async for event in turn.events():
            if on_event is not None and inspect.isawaitable(done := on_event(event)):
                await done
        return await turn

    async def command(self, session_id: str, line: str) -> RpcMessage:
        return await self.request("session/command", {"sessionId": session_id, "line": line})

    async def steer(self, session_id: str, text: str) -> RpcMessage:
        """`session/steer`: a user message for the running turn's next request."""
        return await self.request("session/steer", {"sessionId": session_id, "text": text})

    async def editor_state(self, session_id: str | None = None, **state: Any) -> None:
        """`editor/state` (a notification): `activeFile`, `selection`, `visibleRanges`,
        `diagnostics`; to every open session without `session_id`."""
        params = {**state, **({"sessionId": session_id} if session_id else {})}
        await self.notify("editor/state", params)

    async def complete(self, session_id: str, text: str) -> list[str]:
        result = await self.request("session/complete", {"sessionId": session_id, "text": text})
        return result["items"]

    async def context(self, session_id: str) -> list[RpcMessage]:
        return (await self.request("session/context", {"sessionId": session_id}))["messages"]

    async def list_sessions(self, cwd: str | None = None) -> list[RpcMessage]:
        """Open and stored sessions; only those in `cwd` if given."""
        params = {"cwd": cwd} if cwd is not None else {}
        return (await self.request("session/list", params))["sessions"]

    async def load_session(self, session_id: str, **params: Any) -> RpcMessage:
        """`session/load`: `provider`, `model`, `trusted` optional; the result has the
        newest page of the `history` and its `historyCursor` (`older_history`)."""
        return await self.request("session/load", {"sessionId": session_id, **params})

    async def older_history(self, session_id: str, cursor: str | None) -> list[RpcMessage]:
        """Every page before `cursor` (`session/history`), oldest first, in one list."""
        pages: list[list[RpcMessage]] = []
        while cursor is not None:
            page = await self.request(
                "session/history", {"sessionId": session_id, "cursor": cursor}
            )
            pages.append(page["history"])
            cursor = page["cursor"]
        return [entry for page in reversed(pages) for entry in page]

    async def whole_history(self, loaded: RpcMessage) -> list[RpcMessage]:
        """A `session/load` result's whole history: its page, and every page before it."""
        older = await self.older_history(loaded["sessionId"], loaded.get("historyCursor"))
        return older + loaded["history"]

    async def delete_session(self, session_id: str) -> None:
        await self.request("session/delete", {"sessionId": session_id})

    async def close_session(self, session_id: str) -> None:
        await self.request("session/close", {"sessionId": session_id})

    async def trust(self, session_id: str) -> RpcMessage:
        """`session/trust`: trust the session's folder (remembered); its plugins load."""
        return await self.request("session/trust", {"sessionId": session_id})

    async def set_mode(self, session_id: str, mode_id: str) -> RpcMessage:
        """`session/setMode`: the result's `mode` is `{current, available}`."""
        return await self.request("session/setMode", {"sessionId": session_id, "modeId": mode_id})

    async def cancel(self, session_id: str) -> None:
        await self.notify("session/cancel", {"sessionId": session_id})

    async def close(self, timeout: float = 5.0) -> int:
        """`shutdown`, `exit`, then wait for the daemon (killed after `timeout`)."""
        if self.process.returncode is None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(timeout):
                    await self.request("shutdown")
                await self.notify("exit")
            with contextlib.suppress(Exception):
                assert self.process.stdin is not None
                self.process.stdin.close()
            try:
                async with asyncio.timeout(timeout):
                    await self.process.wait()
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        self._reading.cancel()
        assert self.process.returncode is not None
        return self.process.returncode

    # -- reading -----------------------------------------------------------------------
    async def _read(self) -> None:
        try:
            while (frame := await self._reader.frame()) is not None:
                if isinstance(frame, BadFrame):
                    self.bad_frames.append(frame.message)
                    continue
                try:
                    message = json.loads(frame)
                except ValueError as exc:
                    self.bad_frames.append(f"not JSON: {exc}")
                    continue
                if isinstance(message, dict):
                    if self.trace is not None:
                        self.trace.append(("<--", message))
                    self._dispatch(message)
                else:
                    self.bad_frames.append(f"not an object: {message!r:.80}")
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the daemon closed its output"))
            for turn in self._turns.values():
                turn._finish()

    def _dispatch(self, message: RpcMessage) -> None:
        method = message.get("method")
        if method is not None and "id" in message:
            self._asks[message["id"]] = asyncio.create_task(self._answer(message))
        elif method == "$/cancelRequest":
            task = self._asks.pop((message.get("params") or {}).get("id"), None)
            if task is not None:
                task.cancel()
        elif method is not None:
            self.notifications.append(message)
            if self.on_notification is not None:
                self.on_notification(message)
            turn = self._listeners.get((message.get("params") or {}).get("sessionId", ""))
            if turn is not None:
                turn._event(message)
        else:
            self._response(message)

    def _response(self, message: RpcMessage) -> None:
        msg_id = message.get("id")
        if msg_id is None:
            self.errors.put_nowait(RpcError.received(message.get("error") or {}))
            return
        future = self._pending.pop(msg_id, None)
        turn = self._turns.pop(msg_id, None)
        if turn is not None:
            if self._listeners.get(turn.session_id) is turn:
                del self._listeners[turn.session_id]
            turn._finish()
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(RpcError.received(message["error"]))
        else:
            future.set_result(message.get("result"))

    async def _answer(self, message: RpcMessage) -> None:
        msg_id = message["id"]
        reply: RpcMessage = {"jsonrpc": "2.0", "id": msg_id}
        try:
            handler = self.handlers.get(message["method"])
            if handler is not None:
                result = handler(message.get("params") or {})
                reply["result"] = await result if inspect.isawaitable(result) else result
            elif message["method"] != "input/ask" or self.on_ask is None:
                reply["error"] = {"code": -32601, "message": f"no handler: {message['method']}"}
            else:
                answer = self.on_ask(message.get("params") or {})
                if inspect.isawaitable(answer):
                    answer = await answer
                reply["result"] = None if answer is None else {"text": answer}
        except RpcError as exc:
            reply.pop("result", None)
            reply["error"] = exc.to_dict()
        except asyncio.CancelledError:
            return  # the daemon withdrew the question
        finally:
            self._asks.pop(msg_id, None)
        await self.send(reply)
