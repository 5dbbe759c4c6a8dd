"""Daemon: the editors' face. A table of open sessions, and one method per request.

The protocol module (the only one that knows JSON-RPC) calls `request(method, params)`
and `notice(method, params)`; the answers are plain data, the failures ElelemErrors.
Sessions know nothing of this: their Output and Input are `editor.Events`/`Asker`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ... import __version__
from ...agent import CANCELLED
from ...errors import ElelemError, InvalidParams, SessionBusy, UnknownSession
from ...jsonrpc.framing import MAX_BODY
from ...plugins import origins
from ...store.store import Store
from . import params as spec
from . import saved
from .events import Asker, Events, Peer

log = logging.getLogger(__name__)
WATCH_INTERVAL = 1.0
CLOSE_GRACE = 0.6  # a cancelled turn gets this long to kill its tools (SIGTERM, then SIGKILL)


class ShuttingDown(ElelemError):
    kind = "shutting_down"


class Live:
    """One open session and what the daemon keeps beside it."""

    def __init__(self, session: Any, events: Events) -> None:
        self.session = session
        self.events = events
        self.task: asyncio.Task[Any] | None = None
        self.turns = 0

    @property
    def busy(self) -> bool:
        return self.task is not None

    def run(self, work: Callable[[], Awaitable[Any]]) -> tuple[int, asyncio.Task[Any]]:
        """Start a turn (or command) as this session's one running task."""
        if self.task is not None:
            raise SessionBusy(
                f"session {self.session.id} is busy: a turn is running", sessionId=self.session.id
            )
        self.turns += 1
        self.events.turn_id = self.turns
        self.task = asyncio.ensure_future(work())
        return self.turns, self.task

    def done(self) -> None:
        self.task = None
        self.events.flush()  # held deltas belong to this turn, before its response
        self.events.turn_id = None

    async def cancel(self) -> None:
        if self.task is not None:
            task = self.task
            task.cancel()
            await asyncio.wait([task], timeout=CLOSE_GRACE)

    async def close(self) -> None:
        """Cancel the running turn, then release the session's stored file."""
        await self.cancel()
        self.session.close()

    def introduce(self) -> dict[str, Any]:
        """What `session/new` answers: the description, the tools, the commands and the
        plugins (with where each came from)."""
        s = self.session
        return {
            **self.describe(),
            "tools": [{"name": t.name, "description": t.description} for t in s.toolbox],
            "commands": [{"name": n.lstrip("/"), "description": a} for n, a in s.commands],
            "plugins": origins(s.registry),
        }

    def describe(self) -> dict[str, Any]:
        s = self.session
        return {
            "sessionId": s.id,
            "cwd": str(s.cwd),
            "provider": s.provider_name,
            "model": s.model,
            "busy": self.busy,
            "turns": self.turns,
        }


class Daemon:
    def __init__(
        self,
        peer: Peer,
        provider: str | None = None,
        model: str | None = None,
        max_frame: int = MAX_BODY,
    ):
        self.peer = peer
        self.max_frame = max_frame
        self.provider = provider
        self.model = model
        self.sessions: dict[str, Live] = {}
        self.ask = False
        self.interval = 0.0  # capabilities.events.coalesceMs, in seconds
        self.initialized = False
        self.shut_down = False
        self._registry: Any = None
        self.store = Store()
        self._watch: asyncio.Task[None] | None = None
        self.requests: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "initialize": self.initialize,
            "shutdown": self.shutdown,
            "session/new": self.new,
            "session/turn": self.turn,
            "session/command": self.command,
            "session/complete": self.complete,
            "session/list": self.list_sessions,
            "session/load": self.load,
            "session/delete": self.delete,
            "session/close": self.close_session,
            "session/context": self.context,
        }
        self.notices: dict[str, Callable[[Any], None]] = {
            "session/cancel": self.cancel,
            "initialized": lambda params: None,
            "exit": self.exit,
        }

    async def request(self, method: str, params: Any) -> Any:
        if self.shut_down:
            raise ShuttingDown(f"the daemon is shutting down: {method} refused")
        return await self.requests[method](params)

    def notice(self, method: str, params: Any) -> None:
        self.notices[method](params)

    @property
    def registry(self) -> Any:
        if self._registry is None:
            from ...plugins import core_registry

            self._registry = core_registry()
        return self._registry

    def live(self, session_id: str) -> Live:
        live = self.sessions.get(session_id)
        if live is None:
            shown = session_id if len(session_id) <= 200 else f"{session_id[:200]}..."
            raise UnknownSession(f"unknown session: {shown}", sessionId=shown)
        return live

    # -- lifecycle ---------------------------------------------------------------
    async def initialize(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.INITIALIZE)
        caps = p.get("capabilities", {})
        ask = caps.get("input", {}).get("ask") if isinstance(caps.get("input"), dict) else None
        if ask is not None and not isinstance(ask, bool):
            raise InvalidParams(
                "capabilities.input.ask must be a boolean",
                errors=["capabilities.input.ask: expected a boolean"],
            )
        interval = spec.render_interval(caps)
        self.ask, self.initialized, self.interval = bool(ask), True, interval
        for live in self.sessions.values():
            live.session.input.enabled = self.ask
            live.events.interval = self.interval
        client = p.get("clientInfo", {})
        log.info("client: %s %s", client.get("name", "?"), client.get("version", ""))
        if p.get("processId", 0) > 0 and self._watch is None:
            self._watch = asyncio.create_task(self.watch(p["processId"]))
        return {
            "serverInfo": {"name": "elelem", "version": __version__},
            "capabilities": {
                "providers": self.registry.provider_names(),
                "cancel": True,
                "inputAsk": True,
                "maxFrameBytes": self.max_frame,
            },
        }

    async def watch(self, pid: int) -> None:
        """Exit once the client's process is gone."""
        while alive(pid):
            await asyncio.sleep(WATCH_INTERVAL)
        log.info("client process %d is gone: exiting", pid)
        self.peer.stop(0)

    async def shutdown(self, params: Any) -> None:
        await self.close()
        self.shut_down = True
        return None

    def exit(self, params: Any) -> None:
        self.peer.stop(0 if self.shut_down else 1)

    async def close(self) -> None:
        """Cancel every running turn and wait (briefly) until their tools are dead."""
        await asyncio.gather(*(live.cancel() for live in self.sessions.values()))

    # -- sessions ----------------------------------------------------------------
    async def new(self, params: Any) -> dict[str, Any]:
        from ...config import default_provider
        from ...session import start

        p = spec.check(params, spec.NEW)
        cwd = Path(p.get("cwd") or os.getcwd())
        try:
            cwd = cwd.expanduser()
            problem = None if cwd.is_dir() else "not a directory"
        except (OSError, RuntimeError, ValueError) as exc:  # ~nobody, a name too long, ...
            problem = f"unusable: {exc}"
        if problem:
            raise InvalidParams(f"cwd is {problem}: {cwd}", errors=[f"cwd: {problem}: {cwd}"])
        default = self.provider or default_provider()
        provider = p.get("provider") or default
        model = p.get("model") or (self.model if provider == default else None)
        trusted = p.get("trusted", True)
        return self.open(
            lambda **io: start(
                self.registry, provider, model, cwd, project=trusted, store=self.store, **io
            )
        )

    def open(self, build: Callable[..., Any]) -> dict[str, Any]:
        """Build a session with the editor as its Input and Output; describe it."""
        events = Events(self.peer)
        asker = Asker(self.peer, events, self.ask)
        session = build(input=asker, output=events)
        events.session_id = session.id
        events.interval = self.interval
        self.sessions[session.id] = Live(session, events)
        return self.sessions[session.id].introduce()

    async def turn(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.TURN)
        live = self.live(p["sessionId"])
        agent, conversation = live.session.agent, live.session.conversation
        before = len(conversation)
        turn_id, task = live.run(lambda: live.session.turn(p["text"]))
        try:
            reply, stop = await task, agent.stop_reason
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # $/cancelRequest: answer all the same
                me.uncancel()
            if task.done() and not task.cancelled():  # it ended just before the cancel
                reply, stop = task.result(), agent.stop_reason
            else:
                kept = len(conversation) > before  # nothing is kept if it never started
                reply = conversation.last["content"] if kept else CANCELLED
                stop = "cancelled"
        finally:
            live.done()
        result = {"reply": reply, "stopReason": stop, "turnId": turn_id}
        if agent.usage:
            result["usage"] = dict(agent.usage)
        return result

    async def command(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.COMMAND)
        live = self.live(p["sessionId"])
        turn_id, task = live.run(lambda: live.session.command(p["line"]))
        try:
            output = await task  # cancelled: the request fails with request_cancelled
        finally:
            live.done()
        result: dict[str, Any] = {"output": output, "turnId": turn_id}
        if live.session.exited:  # /exit belongs to the client: tell it, keep the session
            live.session.exited = False
            result["exit"] = True
        return result

    async def complete(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.COMPLETE)
        session = self.live(p["sessionId"]).session
        return {"items": session.commands.complete(p["text"], session.cwd)}

    async def list_sessions(self, params: Any) -> dict[str, Any]:
        return {"sessions": saved.listing(self, spec.check(params, spec.LIST).get("cwd"))}

    async def load(self, params: Any) -> dict[str, Any]:
        return saved.load(self, spec.check(params, spec.LOAD))

    async def delete(self, params: Any) -> dict[str, Any]:
        session_id = spec.check(params, spec.SESSION)["sessionId"]
        live = self.sessions.pop(session_id, None)
        if live is not None:
            await live.close()
        return saved.delete(self, session_id, was_open=live is not None)

    async def close_session(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.SESSION)
        live = self.live(p["sessionId"])
        del self.sessions[p["sessionId"]]
        await live.close()
        return {}

    async def context(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.SESSION)
        return {"messages": self.live(p["sessionId"]).session.context}

    def cancel(self, params: Any) -> None:
        try:
            p = spec.check(params, spec.SESSION)
            task = self.live(p["sessionId"]).task
        except ElelemError as exc:  # a notification has no answer: log it
            log.warning("session/cancel: %s", exc)
            return
        if task is not None:
            task.cancel()


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True
