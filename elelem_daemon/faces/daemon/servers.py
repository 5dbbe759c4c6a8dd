"""The daemon's MCP wiring (docs/mcp.md, "For faces"; protocol.md, "MCP servers").

- `add`: a `session/new` / `session/load`'s `mcpServers` (ACP's list, or the files'
  map `{NAME: {...}}`) join the session's servers (they win over the files' of the
  same name); a bad entry is a problem in the status, never an error response;
- `status`: what `session/new` answers as `mcp` (`{servers: [], problems: []}` for a
  session without servers);
- `Watch`: every change of a server's state or tools is sent as one `event/mcp
  {sessionId, turnId, mcp}` (changes in one pass of the event loop go out as one);
  an OAuth browser step is an `input/ask` of kind `authorize` (withdrawn with
  `$/cancelRequest` once the server no longer needs it), or a line on stderr for a
  client that takes no questions.

The MCP package is imported only for a session that has servers.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...session import Session
    from .events import Asker, Events

log = logging.getLogger(__name__)


def add(session: Session, servers: Any, where: str) -> None:
    """The client's servers for this session, started in the background."""
    from ...mcp.config import from_face

    configs, problems = from_face(servers, where)
    if not configs and not problems:
        return
    from ...mcp.manager import manager_of

    manager_of(session).add(configs, problems)


def status(session: Session) -> dict[str, Any]:
    manager = getattr(session, "mcp", None)
    return manager.status() if manager is not None else {"servers": [], "problems": []}


class Watch:
    """One session's MCP servers, seen by the client."""

    def __init__(self, session: Session, events: Events, asker: Asker) -> None:
        self.session = session
        self.events = events
        self.asker = asker
        self.manager: Any = None
        self._pending = False
        self._asking: dict[str, asyncio.Task[Any]] = {}

    def hook(self) -> None:
        """Listen to the session's manager, if it has one (again after /reload made one)."""
        manager = getattr(self.session, "mcp", None)
        if manager is None or manager is self.manager:
            return
        self.manager = manager
        manager.listeners.append(self.changed)
        manager.on_authorize = self.authorize

    def changed(self, manager: Any) -> None:
        for name, task in list(self._asking.items()):
            server = manager.servers.get(name)
            if server is None or server.state != "needs-auth":
                task.cancel()  # the question is moot: the client closes its prompt
        if self._pending:
            return
        self._pending = True
        asyncio.get_running_loop().call_soon(self.send)

    def send(self) -> None:
        self._pending = False
        if self.manager is not None:
            self.events.notice("event/mcp", {"mcp": self.manager.status()})

    def authorize(self, name: str, url: str) -> None:
        """The browser step: asked in the background, so the OAuth flow goes on waiting
        for the browser's redirect (the answer changes nothing)."""
        if not self.asker.enabled:
            log.warning("MCP server %s needs authorization: open %s", name, url)
            return
        old = self._asking.pop(name, None)
        if old is not None:
            old.cancel()
        prompt = f"MCP server {name} needs authorization: open {url} in your browser"
        task = asyncio.ensure_future(
            self.asker.ask(prompt, ["open"], kind="authorize", server=name, url=url)
        )
        self._asking[name] = task
        task.add_done_callback(lambda done: self._forget(name, done))

    def _forget(self, name: str, task: asyncio.Task[Any]) -> None:
        if self._asking.get(name) is task:
            del self._asking[name]

    def close(self) -> None:
        for task in self._asking.values():
            task.cancel()
        self._asking.clear()
        self.manager = None
