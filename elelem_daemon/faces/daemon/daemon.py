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
from ...base.errors import ElelemError, InvalidParams, ShuttingDown
from ...control.live import Lives
from ...edits.filesystem import EditorFiles, LocalFiles
from ...jsonrpc.framing import MAX_BODY
from ...registry import Registry
from ...store.store import Store
from . import params as spec
from . import saved, servers
from .events import Asker, Events, Peer
from .live import DaemonLive

if TYPE_CHECKING:
    from ...session import Session

log = logging.getLogger(__name__)
WATCH_INTERVAL = 1.0
EXIT_WAIT = 0.3  # seconds a session's MCP servers get to stop when the daemon ends
COMPLETE_WAIT = 5.0  # seconds session/complete waits for the first listing of the cwd
ATTACHMENTS = ["file", "folder", "selection", "diagnostics", "image", "symbol"]


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
        self.editor_states = False  # capabilities.editorState
        # capabilities.files (read, apply, review) and capabilities.fs (readTextFile,
        # writeTextFile): every session's DaemonFiles reads these two, kept in place
        self.files = dict.fromkeys(spec.FILE_CAPABILITIES, False)
        self.fs = [False, False]
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
            "session/steer": self.steer,
            "session/complete": self.complete,
            "session/list": self.list_sessions,
            "session/load": self.load,
            "session/history": self.history,
            "session/delete": self.delete,
            "session/close": self.close_session,
            "session/context": self.context,
            "session/editContext": self.edit_context,
            "session/rewind": self.rewind,
            "session/checkpoints": self.checkpoints,
            "session/trust": self.trust,
            "session/setMode": self.set_mode,
        }
        self.notices: dict[str, Callable[[Any], None]] = {
            "session/cancel": self.cancel,
            "editor/state": self.editor_state,
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
        editor = caps.get("editorState")
        if editor is not None and not isinstance(editor, bool):
            raise InvalidParams(
                "capabilities.editorState must be a boolean",
                errors=["capabilities.editorState: expected a boolean"],
            )
        files, fs = spec.file_capabilities(caps), spec.file_system(caps)
        self.ask, self.interval, self.editor_states = bool(ask), interval, bool(editor)
        self.files.update(files)
        self.fs[:] = fs
        for live in self.lives:
            live.asker.enabled = self.ask
            live.events.interval = self.interval
            self.serve_files(live.session, live.events)
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
                "attachments": ATTACHMENTS,
                "editorState": True,
                "mcpServers": True,
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
        """Close every session (at shutdown and when the daemon ends): running turns are
        cancelled and their tools killed, MCP servers stopped (killed past EXIT_WAIT)."""
        lives = list(self.lives)
        for live in lives:
            self.lives.pop(live.id)
        await asyncio.gather(*(live.close(EXIT_WAIT) for live in lives))

    # -- sessions ----------------------------------------------------------------
    async def new(self, params: Any) -> dict[str, Any]:
        from ...base.config import choose_provider  # deferred, as all a session needs: start-up
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
        trusted = p.get("trusted")  # absent: the trusted-folders file decides (trust.py)
        return self.open(
            lambda **io: start(
                self.registry, provider, model, cwd, project=trusted, store=self.store, **io
            ),
            p.get("mcpServers"),
        )

    def open(
        self, build: Callable[..., Session], mcp_servers: Any = None, where: str = "session/new"
    ) -> dict[str, Any]:
        """Build a session with the editor as its Input and Output, give it the client's
        MCP servers; describe it."""
        events = Events(self.peer)
        asker = Asker(self.peer, events, self.ask)
        session = build(input=asker, output=events)
        self.serve_files(session, events)
        events.session_id = session.id
        events.interval = self.interval
        live = self.lives.add(DaemonLive(session, events, asker))
        return self.add_servers(live, mcp_servers, where)

    def serve_files(self, session: Session, events: Events) -> None:
        """`session.files` through the editor in the directions the client offered
        (`capabilities.files`, `capabilities.fs`: faces/daemon/files.py), else the local
        disk."""
        if any(self.files.values()) or any(self.fs):
            if not isinstance(session.files, EditorFiles):
                from .files import DaemonFiles  # it reads the capabilities at each call

                session.files = DaemonFiles(self.peer, events, self.files, self.fs)
        elif isinstance(session.files, EditorFiles):
            session.files = LocalFiles()

    def add_servers(self, live: DaemonLive, mcp_servers: Any, where: str) -> dict[str, Any]:
        """The client's `mcpServers` join the session's (a bad one is a problem in the
        `mcp` status, not an error); describe the session."""
        if mcp_servers is not None:
            servers.add(live.session, mcp_servers, where)
        live.servers.hook()
        return live.introduce()

    async def turn(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.TURN)
        live = self.lives.get(p["sessionId"])
        await live.confirm_held()
        # attachments are expanded in the turn's task (the busy rule holds); a refused one
        # raises AttachmentError (invalid_attachment) and starts no turn
        result = await live.turn(p["text"], p.get("attachments", ()))  # cancelled: answered
        answer = {"reply": result.reply, "stopReason": result.stop_reason, "turnId": live.turns}
        if result.usage:
            answer["usage"] = dict(result.usage)
        return answer

    async def command(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.COMMAND)
        live = self.lives.get(p["sessionId"])
        await live.confirm_held(p["line"])
        result = await live.command(p["line"])  # cancelled: fails with request_cancelled
        answer: dict[str, Any] = {
            "output": result.output,
            "markdown": result.markdown,
            "turnId": live.turns,
        }
        if result.exit:  # the client ends the session, if it wants to
            answer["exit"] = True
        return answer

    async def steer(self, params: Any) -> dict[str, Any]:
        """`session/steer`: a user message for the running turn (steering.py); -32006
        `not_running` when no turn runs. `event/steer` says when the turn took it."""
        p = spec.check(params, spec.STEER)
        self.lives.get(p["sessionId"]).session.steer(p["text"])
        return {"queued": True}

    async def complete(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.COMPLETE)
        session = self.lives.get(p["sessionId"]).session
        if not p["text"].startswith("/"):  # paths: the cwd's listing, .gitignore honoured
            from ...context.paths import index

            try:
                async with asyncio.timeout(COMPLETE_WAIT):
                    await asyncio.shield(index(session.cwd).ready())
            except TimeoutError:  # a huge tree: answered from the folder on disk meanwhile
                log.info("session/complete: the listing of %s is not ready yet", session.cwd)
        return {"items": session.commands.complete(p["text"], session.cwd)}

    async def list_sessions(self, params: Any) -> dict[str, Any]:
        return {"sessions": await saved.listing(self, spec.check(params, spec.LIST).get("cwd"))}

    async def load(self, params: Any) -> dict[str, Any]:
        return await saved.load(self, spec.check(params, spec.LOAD))

    async def history(self, params: Any) -> dict[str, Any]:
        return saved.older(self, spec.check(params, spec.HISTORY))

    async def delete(self, params: Any) -> dict[str, Any]:
        session_id = spec.check(params, spec.SESSION)["sessionId"]
        live = self.lives.pop(session_id)
        if live is not None:
            await live.close()
        return await saved.delete(self, session_id, live.session.cwd if live else None)

    async def close_session(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.SESSION)
        live = self.lives.get(p["sessionId"])
        self.lives.pop(live.id)
        await live.close()
        return {}

    async def trust(self, params: Any) -> dict[str, Any]:
        """Trust the session's folder (kept in the trusted-folders file) and load its
        plugins, rules and MCP servers now; answer as `session/new` does."""
        from ...safety.trust import decide, grant

        live = self.lives.get(spec.check(params, spec.SESSION)["sessionId"])
        live.ensure_idle()
        session = live.session
        grant(session, session.trust or decide(session.cwd), keep=True)
        return live.introduce()

    async def set_mode(self, params: Any) -> dict[str, Any]:
        """`session/setMode`: allowed while a turn runs (its next provider request has the
        new mode); an unknown id is UnknownMode (-32602, `data.modes`). `event/mode`
        follows a change, as it follows `/mode`."""
        p = spec.check(params, spec.SET_MODE)
        session = self.lives.get(p["sessionId"]).session
        session.modes.set(p["modeId"])
        return {"mode": session.modes.to_dict()}

    async def context(self, params: Any) -> dict[str, Any]:
        p = spec.check(params, spec.SESSION)
        return {"messages": self.lives.get(p["sessionId"]).session.context}

    async def edit_context(self, params: Any) -> dict[str, Any]:
        """`session/editContext`: delete kept messages, or replace one's text (an empty
        one deletes it), by their place in `session/context`'s messages (editing.py);
        not while a turn runs. Answers as `session/context` does."""
        from ...control import editing

        p = spec.check(params, spec.EDIT_CONTEXT)
        live = self.lives.get(p["sessionId"])
        live.ensure_idle()
        session = live.session
        count = len(session.context)
        if "delete" in p and "index" not in p and "content" not in p:
            places = p["delete"]
            if not places or not all(type(n) is int for n in places):
                raise editing.EditError("delete: a list of message places (integers)")
            if len(places) > count:
                raise editing.EditError(f"delete: more places than the {count} messages")
            chosen = sorted({n + 1 for n in places})
            for number in chosen:
                editing.check(number, count, 0)
            editing.delete(session, chosen)
        elif "index" in p and "content" in p and "delete" not in p:
            editing.replace(session, p["index"] + 1, p["content"], 0)
        else:
            raise editing.EditError("send either delete: [places], or index and content")
        return {"messages": session.context}

    async def rewind(self, params: Any) -> dict[str, Any]:
        """`session/rewind`: the core's rewind, as the session's one task (unnumbered)."""
        from ...control.rewind import rewind

        p = spec.check(params, spec.REWIND)
        live = self.lives.get(p["sessionId"])
        files, conversation = p.get("files", True), p.get("conversation", True)
        if not (files or conversation):
            raise InvalidParams(
                "rewind what? files and conversation are both false",
                errors=["files: false and conversation: false rewind nothing"],
            )
        dry_run = p.get("dryRun", False)
        done = await live.hold(
            lambda: rewind(
                live.session,
                p["turnId"],
                files,
                conversation,
                dry_run,
                p.get("force", False),
                p.get("confirm"),
            )
        )
        answer = done.to_dict()
        if conversation and not dry_run:  # the history to redraw
            answer.update(saved.messages(live.session))
        return answer

    async def checkpoints(self, params: Any) -> dict[str, Any]:
        """`session/checkpoints`: the turns one can rewind to, for a picker."""
        from ...control.rewind import turns

        live = self.lives.get(spec.check(params, spec.SESSION)["sessionId"])
        history = live.session.checkpoints
        return {
            "enabled": bool(history is not None and history.enabled),
            "turns": await turns(live.session),
        }

    def editor_state(self, params: Any) -> None:
        """`editor/state`, from a client that said `capabilities.editorState`: to its
        session, or without `sessionId` to every open one. Never answered: a bad one is
        logged."""
        if not self.editor_states:
            log.info("editor/state without capabilities.editorState: ignored")
            return
        try:
            p = spec.check(params, spec.EDITOR_STATE)
            lives = [self.lives.get(p["sessionId"])] if "sessionId" in p else list(self.lives)
            for live in lives:
                live.editor_state(p)
        except ElelemError as exc:
            log.warning("editor/state: %s", exc)

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
