"""Daemon: the editors' face. A table of open sessions, and one method per request.

The protocol module (the only one that knows pygls) calls `request(method, params)`
and `notice(method, params)`; the answers are plain data, the failures ElelemErrors.
Sessions know nothing of this: their Output and Input are `events.Events`/`Asker`.
What a turn, a command, the busy rule and `/exit` mean is the core's (`live.Live`,
`session.Session`); this only shapes the answers of protocol.md.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import __version__
from ...errors import ElelemError, InvalidParams, ShuttingDown
from ...jsonrpc.framing import MAX_BODY
from ...live import Live, Lives
from ...plugins import origins
from ...registry import Registry
from ...store.store import Store
from . import params as spec
from . import saved
from .events import Asker, Events, Peer
from .files import DaemonFiles

if TYPE_CHECKING:
    from ...session import Session

log = logging.getLogger(__name__)
WATCH_INTERVAL = 1.0


class DaemonLive(Live):
    """An open session, the Events that number its turns' notifications, and the Asker
    that sends its questions."""

    def __init__(self, session: Session, events: Events, asker: Asker) -> None:
        super().__init__(session)
        self.events = events
        self.asker = asker

    def started(self) -> None:
        self.events.turn_id = self.turns

    def ended(self) -> None:
        self.events.flush()  # held deltas belong to this turn, before its response
        self.events.turn_id = None

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
        *,
        store: Store,
    ):
        self.peer = peer
        self.max_frame = max_frame
        self.provider = provider
        self.model = model
        self.lives: Lives[DaemonLive] = Lives()
        self.ask = False
        self.files = dict.fromkeys(spec.FILE_CAPABILITIES, False)  # capabilities.files
        self.interval = 0.0  # capabilities.events.coalesceMs, in seconds
        self.shut_down = False
        self._registry: Registry | None = None
        self.store = store  # the process's one (cli.main)
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
    def registry(self) -> Registry:
        if self._registry is None:
            from ...plugins import core_registry

            self._registry = core_registry()
        return self._registry

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
        files = spec.file_capabilities(caps)
        self.ask, self.interval = bool(ask), interval
        self.files.update(files)  # every session's DaemonFiles reads this one dict
        for live in self.lives:
            live.asker.enabled = self.ask
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
                "files": {"read": True, "propose": True},
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
        await asyncio.gather(*(live.stop() for live in self.lives))

    # -- sessions ----------------------------------------------------------------
    async def new(self, params: Any) -> dict[str, Any]:
        from ...config import choose_provider  # deferred, as all a session needs: start-up
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
        provider, model = choose_provider(
            p.get("provider"), p.get("model"), self.provider, self.model
        )
        trusted = p.get("trusted", True)
        return self.open(
            lambda **io: start(
                self.registry, provider, model, cwd, project=trusted, store=self.store, **io
            )
        )

    def open(self, build: Callable[..., Session]) -> dict[str, Any]:
        """Build a session with the editor as its Input and Output; describe it."""
        events = Events(self.peer)
        asker = Asker(self.peer, events, self.ask)
        session = build(input=asker, output=events)
        session.files = DaemonFiles(self.peer, events, self.files)
        events.session_id = session.id
        events.interval = self.interval
        return self.lives.add(DaemonLive(session, events, asker)).introduce()

    async def turn(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.TURN)
        live = self.lives.get(p["sessionId"])
        result = await live.turn(p["text"])  # cancelled too: answered all the same
        answer = {"reply": result.reply, "stopReason": result.stop_reason, "turnId": live.turns}
        if result.usage:
            answer["usage"] = dict(result.usage)
        return answer

    async def command(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.COMMAND)
        live = self.lives.get(p["sessionId"])
        result = await live.command(p["line"])  # cancelled: fails with request_cancelled
        answer: dict[str, Any] = {"output": result.output, "turnId": live.turns}
        if result.exit:  # the client ends the session, if it wants to
            answer["exit"] = True
        return answer

    async def complete(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.COMPLETE)
        session = self.lives.get(p["sessionId"]).session
        return {"items": session.commands.complete(p["text"], session.cwd)}

    async def list_sessions(self, params: Any) -> dict[str, Any]:
        return {"sessions": saved.listing(self, spec.check(params, spec.LIST).get("cwd"))}

    async def load(self, params: Any) -> dict[str, Any]:
        return saved.load(self, spec.check(params, spec.LOAD))

    async def delete(self, params: Any) -> dict[str, Any]:
        session_id = spec.check(params, spec.SESSION)["sessionId"]
        live = self.lives.pop(session_id)
        if live is not None:
            await live.close()
        return saved.delete(self, session_id, was_open=live is not None)

    async def close_session(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.SESSION)
        live = self.lives.get(p["sessionId"])
        self.lives.pop(live.id)
        await live.close()
        return {}

    async def context(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.SESSION)
        return {"messages": self.lives.get(p["sessionId"]).session.context}

    def cancel(self, params: Any) -> None:
        try:
            p = spec.check(params, spec.SESSION)
            live = self.lives.get(p["sessionId"])
        except ElelemError as exc:  # a notification has no answer: log it
            log.warning("session/cancel: %s", exc)
            return
        live.cancel()


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
