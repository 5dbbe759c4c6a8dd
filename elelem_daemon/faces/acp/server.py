"""AcpServer: the Agent Client Protocol methods, each a thin call into the core."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from ... import __version__
from ...errors import ElelemError
from ...plugins import origins
from .buffers import EditorFiles
from .connection import Connection, RpcError, invalid_params
from .editor import AcpInput, AcpOutput
from .live import AcpSession

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
UNKNOWN_SESSION = "unknown session"
RESOURCE_NOT_FOUND = -32002


def field(params: dict[str, Any], name: str, kind: type, required: bool = True) -> Any:
    """params[name] when it has the right type; an invalid-params error otherwise."""
    value = params.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = {str: "a string", int: "an integer", list: "an array", dict: "an object"}
        what = "missing" if value is None else f"not {expected.get(kind, kind.__name__)}"
        raise invalid_params(f"{name}: {what}", errors=[{"field": name, "expected": kind.__name__}])
    return value


class AcpServer:
    def __init__(
        self, connection: Connection, provider: str | None = None, model: str | None = None
    ) -> None:
        self.connection = connection
        self.provider = provider
        self.model = model
        self.client: dict[str, Any] = {}
        self.sessions: dict[str, AcpSession] = {}
        self._registry: Any = None
        connection.requests.update(
            {
                "initialize": self.initialize,
                "authenticate": self.authenticate,
                "session/new": self.new_session,
                "session/load": self.load_session,
                "session/prompt": self.prompt,
                "session/set_mode": self.set_mode,
                "session/set_config_option": self.set_config_option,
                "session/list": self.list_sessions,
            }
        )
        connection.notifications["session/cancel"] = self.cancel

    # -- lifecycle --------------------------------------------------------------
    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = field(params, "protocolVersion", int)
        capabilities = field(params, "clientCapabilities", dict, required=False) or {}
        self.client = capabilities
        info = params.get("clientInfo") or {}
        log.info("acp: client %s %s, protocol %s", info.get("name"), info.get("version"), asked)
        return {
            "protocolVersion": PROTOCOL_VERSION,  # the asked one if we speak it, else our latest
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": False, "sse": False},
                "sessionCapabilities": {"list": {}},
            },
            "agentInfo": {"name": "elelem", "title": "elelem", "version": __version__},
            "authMethods": [],
        }

    async def authenticate(self, params: dict[str, Any]) -> dict[str, Any]:
        """No method is offered: providers read their keys from the environment."""
        raise invalid_params(
            "elelem offers no authentication methods; set the provider's key "
            "in the environment (see docs/acp.md)"
        )

    # -- sessions -----------------------------------------------------------------
    def registry(self) -> Any:
        if self._registry is None:
            from ...plugins import core_registry

            self._registry = core_registry()
        return self._registry

    def face(self, params: dict[str, Any]) -> AcpSession:
        ident = field(params, "sessionId", str)
        face = self.sessions.get(ident)
        if face is None:
            raise invalid_params(
                f"{UNKNOWN_SESSION}: {ident}", kind="unknown_session", sessionId=ident
            )
        return face

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = self._cwd(params)
        ignored = self._mcp_servers(params)
        face = self._build(cwd)
        return {"sessionId": face.id, **self._opened(face, ignored)}

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """Open a stored session (or one open here) and replay its history first."""
        ident = field(params, "sessionId", str)
        ignored = self._mcp_servers(params)
        face = self.sessions.get(ident)
        if face is None:
            cwd = self._cwd(params) if params.get("cwd") is not None else None
            face = self._build(cwd, self._stored(ident))
        face.replay()
        return self._opened(face, ignored)

    def _opened(self, face: AcpSession, ignored: list[str]) -> dict[str, Any]:
        """Keep the session; the result common to session/new and session/load."""
        self.sessions[face.id] = face
        meta: dict[str, Any] = {"plugins": origins(face.session.registry)}
        if ignored:
            meta["unsupported"] = {"mcpServers": ignored}
        answer: dict[str, Any] = {
            "modes": face.modes(),
            "configOptions": face.config_options(),
            "_meta": {"elelem": meta},
        }
        asyncio.get_running_loop().call_soon(face.advertise)  # after the response
        return answer

    @staticmethod
    def _stored(ident: str) -> Any:
        from ...store.store import Store

        try:
            return Store().load(ident)
        except ElelemError as exc:
            data = {"kind": exc.kind, "sessionId": ident}
            raise RpcError(RESOURCE_NOT_FOUND, str(exc), data) from None

    def _cwd(self, params: dict[str, Any]) -> Path:
        cwd = Path(field(params, "cwd", str))
        if not cwd.is_absolute():
            raise invalid_params(f"cwd: must be an absolute path: {cwd}")
        if not cwd.is_dir():
            raise invalid_params(f"cwd: not a directory: {cwd}")
        return cwd

    def _mcp_servers(self, params: dict[str, Any]) -> list[str]:
        """MCP servers are accepted and reported unsupported: their names come back."""
        servers = field(params, "mcpServers", list, required=False) or []
        names = []
        for index, server in enumerate(servers):
            if not isinstance(server, dict) or not isinstance(server.get("name"), str):
                raise invalid_params(f"mcpServers[{index}]: an MCP server needs a name")
            names.append(server["name"])
        if names:
            log.warning("acp: MCP servers are not supported yet; ignoring %s", ", ".join(names))
        return names

    def _build(self, cwd: Path | None, stored: Any = None) -> AcpSession:
        """A new session in cwd, or the stored one continued (in cwd if given), saved as it goes."""
        from ...config import default_provider
        from ...session import resume, start
        from ...store.store import Store

        face = AcpSession(self.connection)
        io = {"input": AcpInput(face), "output": AcpOutput(face)}
        try:
            if stored is None:
                provider = self.provider or default_provider()
                face.session = start(
                    self.registry(), provider, self.model, cwd, store=Store(), **io
                )
            else:
                stored.cwd = str(cwd or stored.cwd)
                face.session = resume(self.registry(), Store(), stored, **io)
        except ElelemError as exc:
            raise invalid_params(str(exc), kind=exc.kind) from None
        elicitation = self.client.get("elicitation")
        face.elicits = isinstance(elicitation, dict) and isinstance(elicitation.get("form"), dict)
        fs = self.client.get("fs") or {}
        read, write = fs.get("readTextFile") is True, fs.get("writeTextFile") is True
        if read or write:
            face.session.files = EditorFiles(self.connection, face.id, read, write)
        return face

    async def list_sessions(self, params: dict[str, Any]) -> dict[str, Any]:
        """Stored sessions, most recent first, then those open here and not yet stored."""
        from ...store.store import Store

        cwd = field(params, "cwd", str, required=False)
        if cwd is not None and not Path(cwd).is_absolute():
            raise invalid_params(f"cwd: must be an absolute path: {cwd}")
        if field(params, "cursor", str, required=False) is not None:
            raise invalid_params("cursor: unknown cursor (every session comes in one page)")
        where = str(Path(cwd).resolve()) if cwd else None
        listed = []
        for stored in Store().list(where):
            entry = {"sessionId": stored.id, "cwd": stored.cwd, "updatedAt": stored.updated}
            if stored.title:
                entry["title"] = stored.title
            listed.append(self._meta(entry, stored.provider, stored.model))
        known = {entry["sessionId"] for entry in listed}
        for face in self.sessions.values():
            session = face.session
            if face.id not in known and where in (None, str(session.cwd)):
                entry = {"sessionId": face.id, "cwd": str(session.cwd)}
                listed.append(self._meta(entry, session.provider_name, session.model))
        return {"sessions": listed}

    def _meta(self, entry: dict[str, Any], provider: str, model: str | None) -> dict[str, Any]:
        meta = {"provider": provider, "model": model, "open": entry["sessionId"] in self.sessions}
        return {**entry, "_meta": {"elelem": meta}}

    def close(self) -> None:
        """Release every session (its stored file and lock); called when input ends."""
        for face in self.sessions.values():
            face.session.close()
        self.sessions.clear()

    # -- prompts ------------------------------------------------------------------
    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        face = self.face(params)
        return await face.prompt(params.get("prompt"))

    async def cancel(self, params: dict[str, Any]) -> None:
        face = self.sessions.get(params.get("sessionId"))  # type: ignore[arg-type]
        if face is None:
            log.warning("acp: session/cancel for unknown session %s", params.get("sessionId"))
            return
        face.cancel()

    # -- provider and model -----------------------------------------------------------
    async def set_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        face = self.face(params)
        self._switch(face, field(params, "modeId", str), None)
        face.update(
            {"sessionUpdate": "config_option_update", "configOptions": face.config_options()}
        )
        return {}

    async def set_config_option(self, params: dict[str, Any]) -> dict[str, Any]:
        face = self.face(params)
        option, value = field(params, "configId", str), field(params, "value", str)
        if option == "provider":
            self._switch(face, value, None)
        elif option == "model":
            self._switch(face, None, value)
        else:
            raise invalid_params(f"configId: unknown option: {option}. Options: provider, model")
        face.update(
            {"sessionUpdate": "current_mode_update", "currentModeId": face.session.provider_name}
        )
        return {"configOptions": face.config_options()}

    @staticmethod
    def _switch(face: AcpSession, provider: str | None, model: str | None) -> None:
        try:
            face.session.switch(provider, model)
        except ElelemError as exc:
            raise invalid_params(str(exc), kind=exc.kind) from None
