"""AcpServer: the Agent Client Protocol methods, each a thin call into the core.

An ElelemError a method lets out is answered through the one code table
(`jsonrpc.errors`), as in the daemon face.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from ...base.errors import NoStoredSession, ProviderError
from ...control.live import Lives
from ...jsonrpc.errors import invalid_params
from ...plugins import origins
from ...registry import Registry
from ...store.records import Stored
from ...store.store import Store
from . import auth, capabilities, options, stored, system
from .buffers import editor_files
from .connection import Connection
from .editor import AcpInput, AcpOutput
from .live import AcpLive
from .params import additional_directories, field

log = logging.getLogger(__name__)


def trusted_of(params: dict[str, Any]) -> bool | None:
    """What the client says of the folder's trust: `_meta.elelem.trusted` or
    `_meta.trusted` (a boolean); None when it says nothing."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return None
    ours = meta.get("elelem")
    for value in (ours.get("trusted") if isinstance(ours, dict) else None, meta.get("trusted")):
        if isinstance(value, bool):
            return value
    return None


class AcpServer:
    def __init__(
        self,
        connection: Connection,
        provider: str | None = None,
        model: str | None = None,
        *,
        store: Store,
    ) -> None:
        self.connection = connection
        self.provider = provider
        self.model = model
        self.store = store  # the process's one (cli.main)
        self.client: dict[str, Any] = {}
        self.lives: Lives[AcpLive] = Lives()
        self._registry: Registry | None = None
        connection.requests.update(
            {
                "initialize": self.initialize,
                "authenticate": self.authenticate,
                "logout": auth.logout,
                "session/new": self.new_session,
                "session/load": self.load_session,
                "session/prompt": self.prompt,
                "session/set_mode": self.set_mode,
                "session/set_config_option": self.set_config_option,
                "session/list": self.list_sessions,
                "session/resume": self.resume_session,
                "session/close": self.close_session,
                "session/delete": lambda params: stored.delete_session(self, params),
                "session/fork": self.fork_session,
            }
        )
        connection.notifications["session/cancel"] = self.cancel

    # -- lifecycle --------------------------------------------------------------
    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = field(params, "protocolVersion", int)
        client = field(params, "clientCapabilities", dict, required=False) or {}
        self.client = client
        info = params.get("clientInfo") or {}
        log.info("acp: client %s %s, protocol %s", info.get("name"), info.get("version"), asked)
        return capabilities.answer(client, await self._takes_images())

    async def _takes_images(self) -> bool:
        """Whether a new session's provider reads images (its `vision`), so a client
        offers an image only where the model takes it. A session switched to another
        model later still says so per prompt (context/expansion.py)."""
        from ...base.config import choose_provider

        try:
            name, model = choose_provider(face_provider=self.provider, face_model=self.model)
            provider = self.registry().build_provider(name, model)
        except Exception as exc:  # a provider that cannot start: the session will say why
            log.info("acp: no provider to ask about images: %s", exc)
            return False
        with contextlib.suppress(Exception):
            await provider.aclose()  # type: ignore[attr-defined]
        return bool(getattr(provider, "vision", False))

    async def authenticate(self, params: dict[str, Any]) -> dict[str, Any]:
        from ...base.config import choose_provider

        provider, _ = choose_provider(face_provider=self.provider, face_model=self.model)
        return auth.authenticate(self.client, params.get("methodId"), provider, self.provider)

    # -- sessions -----------------------------------------------------------------
    def registry(self) -> Registry:
        if self._registry is None:
            from ...plugins import core_registry

            self._registry = core_registry()
        return self._registry

    def live(self, params: dict[str, Any]) -> AcpLive:
        return self.lives.get(field(params, "sessionId", str))

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = self._cwd(params)
        servers = self._mcp_servers(params)
        roots = additional_directories(params)
        prompt = system.parse(params)
        live = self._build(cwd, trusted=trusted_of(params))
        live.roots = roots
        system.apply(live.session, prompt)
        return {"sessionId": live.id, **self._opened(live, servers, "session/new")}

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """Open a stored session (or one open here) and replay its history first."""
        live, servers = await self._reopen(params)
        await live.replay()
        return self._opened(live, servers, "session/load")

    async def resume_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """`session/load` without the replay: the client keeps its own copy of the
        history (ACP's session/resume); the rest is the same."""
        live, servers = await self._reopen(params)
        return self._opened(live, servers, "session/resume")

    async def fork_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """ACP's `session/fork` (unstable): a new session holding a copy of the stored
        history (Store.fork), open here in `cwd` as `session/resume` opens one: listed,
        loadable and resumable, here or in another process."""
        field(params, "sessionId", str)
        self._cwd(params)
        self._mcp_servers(params)
        additional_directories(params)
        system.parse(params)  # every check before anything is copied
        new = await stored.fork_stored(self, params["sessionId"])
        live, servers = await self._reopen({**params, "sessionId": new})
        return {"sessionId": live.id, **self._opened(live, servers, "session/fork")}

    async def _reopen(self, params: dict[str, Any]) -> tuple[AcpLive, list[Any]]:
        """The session open here, or the stored one continued; its roots and client
        system prompt are the ones this request names (absent: those it had)."""
        ident = field(params, "sessionId", str)
        servers = self._mcp_servers(params)
        roots = additional_directories(params) if "additionalDirectories" in params else None
        prompt = system.parse(params)
        live = self.lives.find(ident)
        if live is None:
            cwd = self._cwd(params) if params.get("cwd") is not None else None
            stored = await asyncio.to_thread(self._stored, ident)  # a big file: off the loop
            live = self.lives.find(ident)  # opened meanwhile (a second load of it)
            if live is None:  # kept at once: a second load during the replay finds it
                live = self.lives.add(self._build(cwd, stored, trusted_of(params)))
        if roots is not None:
            live.roots = roots
        system.apply(live.session, prompt)
        return live, servers

    async def close_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """Cancel the session's turn, then release it (its stored file and lock, its
        provider, its MCP servers); it stays stored, to load or resume later. An id not
        open here is UnknownSession."""
        live = self.live(params)
        self.lives.pop(live.id)
        await live.close()
        return {}

    def _opened(self, live: AcpLive, servers: list[Any], where: str) -> dict[str, Any]:
        """Keep the session, start the client's MCP servers (their tools join when they
        are up); the result common to session/new and session/load."""
        self.lives.add(live)
        if servers:
            from ...mcp.config import from_acp
            from ...mcp.manager import manager_of

            manager_of(live.session).add(*from_acp(servers, where))
        live.watch()
        manager = getattr(live.session, "mcp", None)
        meta: dict[str, Any] = {
            "plugins": origins(live.session.registry),
            "mcp": manager.status() if manager is not None else {"servers": [], "problems": []},
        }
        if live.session.trust is not None:
            meta["trust"] = live.session.trust.report()
        if live.session.held:  # the user's own files held (vetted.py): not loaded
            meta["held"] = [item.to_dict() for item in live.session.held]
        answer: dict[str, Any] = {
            "modes": live.modes(),
            "configOptions": live.config_options(),
            "_meta": {"elelem": meta},
        }
        asyncio.get_running_loop().call_soon(live.advertise)  # after the response
        return answer

    def _stored(self, ident: str) -> Stored:
        try:
            return self.store.load(ident)
        except NoStoredSession as exc:
            raise NoStoredSession(str(exc), sessionId=ident) from None

    def _cwd(self, params: dict[str, Any]) -> Path:
        cwd = Path(field(params, "cwd", str))
        if not cwd.is_absolute():
            raise invalid_params(f"cwd: must be an absolute path: {cwd}")
        if not cwd.is_dir():
            raise invalid_params(f"cwd: not a directory: {cwd}")
        return cwd

    def _mcp_servers(self, params: dict[str, Any]) -> list[Any]:
        """The client's MCP servers (stdio, http, sse): objects with a name, as ACP's
        schema has them (else invalid params); what else is wrong in an entry is a
        problem in `_meta.elelem.mcp`, and that server is left out."""
        servers = field(params, "mcpServers", list, required=False) or []
        for index, server in enumerate(servers):
            if not isinstance(server, dict) or not isinstance(server.get("name"), str):
                raise invalid_params(f"mcpServers[{index}]: an MCP server needs a name")
        return servers

    def _build(
        self, cwd: Path | None, stored: Stored | None = None, trusted: bool | None = None
    ) -> AcpLive:
        """A new session in cwd, or the stored one continued (in cwd if given), saved as
        it goes; `trusted` is what the client said of the folder (None: nothing)."""
        from ...base.config import choose_provider  # deferred, as all a session needs: start-up
        from ...session import resume, start

        output = AcpOutput(self.connection)
        elicitation = self.client.get("elicitation")
        elicits = isinstance(elicitation, dict) and isinstance(elicitation.get("form"), dict)
        input = AcpInput(self.connection, output, elicits)
        if stored is None:  # stored at once: ACP clients keep the id to load it later
            provider, model = choose_provider(face_provider=self.provider, face_model=self.model)
            if auth.terminal_auth(self.client) and auth.no_provider_chosen(self.provider, provider):
                raise auth.auth_required(self.client, "no model provider is set up")
            try:
                session = start(
                    self.registry(), provider, model, cwd, input, output,
                    store=self.store, store_now=True, face="editor", project=trusted,
                )  # fmt: skip
            except ProviderError as exc:  # a provider without its key, or its server
                if auth.terminal_auth(self.client):
                    raise auth.auth_required(self.client, str(exc)) from None
                raise
        else:
            session = resume(
                self.registry(), self.store, stored, cwd=cwd, input=input, output=output,
                face="editor", project=trusted,
            )  # fmt: skip
        session.commands.hide("exit")  # the editor owns the session's life
        session.commands.hide("steer")  # a prompt during a turn steers it (capabilities.py)
        output.attach(session)
        fs = self.client.get("fs") or {}
        read, write = fs.get("readTextFile") is True, fs.get("writeTextFile") is True
        if read or write:
            session.files = editor_files(self.connection, session.id, read, write)
        trust = session.trust  # untrusted, and the client said nothing: ask at the first prompt
        ask = trusted is None and trust is not None and not trust.trusted and bool(trust.skipped)
        return AcpLive(session, output, ask_trust=ask, booleans=capabilities.booleans(self.client))

    async def list_sessions(self, params: dict[str, Any]) -> dict[str, Any]:
        return await stored.list_sessions(self, params)

    async def stop(self) -> None:
        """Cancel every running turn and wait (briefly) until their tools are dead."""
        await asyncio.gather(*(live.stop() for live in self.lives))

    async def close(self) -> None:
        """Stop every session's turn, then release it (its stored file and lock, its
        provider); called when input ends or a signal came."""
        lives = list(self.lives)
        for live in lives:
            self.lives.pop(live.id)
        await asyncio.gather(*(live.close() for live in lives))

    # -- prompts ------------------------------------------------------------------
    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self.live(params).prompt(params.get("prompt"))

    async def cancel(self, params: dict[str, Any]) -> None:
        live = self.lives.find(params.get("sessionId"))
        if live is None:
            log.warning("acp: session/cancel for unknown session %s", params.get("sessionId"))
            return
        live.cancel()

    # -- provider and model -----------------------------------------------------------
    async def set_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        """The session's mode (modes.py); allowed while a turn runs. An unknown id is
        UnknownMode (-32602, `data.modes`)."""
        self.live(params).session.modes.set(field(params, "modeId", str))
        return {}

    async def set_config_option(self, params: dict[str, Any]) -> dict[str, Any]:
        live = self.live(params)
        if options.set_option(live.session, params) in ("provider", "model"):
            live.provider_changed()
        return {"configOptions": live.config_options()}
