"""Remote: connections to servers over HTTP: Streamable HTTP (`type: http`) and the
older HTTP+SSE (`type: sse`), both through the SDK's transports.

The config's `headers` go with every request; without an `Authorization` header the
SDK's OAuth flow is ready for a server that answers 401 (oauth.py). An HTTP server
has no process to watch: it is found gone when a request fails to connect, or when
the server forgot our session (404), and then it is connected again (server.py).
Bounds: the SDK caps one SSE event at 1 MiB; requests time out after 30 s to
connect, 300 s between bytes of a response stream.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from ..base.log import notice
from .config import ServerConfig
from .names import digest

# The SDK (httpx2, mcp.client.*) is imported inside the methods: a Remote is made on
# the event loop, before the SDK is loaded (in a worker thread, see server.py).


class NeedsAuth(Exception):
    """The user did not authorize in time (or the flow failed): wait for /mcp restart."""


class Remote:
    def __init__(self, config: ServerConfig, oauth_dir: Path, manager: Any) -> None:
        self.config = config
        self.manager = manager
        self.tokens_path = oauth_dir / f"{config.name}-{digest(config.url or '')}.json"
        self.tokens: Any = None  # the TokenFile, once the SDK is loaded

    def _needs_oauth(self) -> bool:
        return not any(key.lower() == "authorization" for key, _ in self.config.headers)

    @asynccontextmanager
    async def open(self, link: Any) -> AsyncIterator[tuple[Any, Any]]:
        import httpx2
        from mcp.client.sse import sse_client
        from mcp.client.streamable_http import streamable_http_client

        url = self.config.url or ""
        headers = dict(self.config.headers)
        auth = await self._auth(link) if self._needs_oauth() else None
        timeout = httpx2.Timeout(30.0, read=300.0)
        if self.config.transport == "sse":
            async with sse_client(url, headers=headers, auth=auth, timeout=30.0) as streams:
                yield streams
            return
        async with httpx2.AsyncClient(headers=headers, auth=auth, timeout=timeout) as client:
            async with streamable_http_client(url, http_client=client) as streams:
                yield streams

    async def _auth(self, link: Any) -> Any:
        import anyio

        from .oauth import Callback, TokenFile, provider

        if self.tokens is None:
            self.tokens = TokenFile(self.tokens_path)
        options = dict(self.config.oauth)
        stored = self.tokens.read()
        callback = Callback(int(options.get("callbackPort") or stored.get("port") or 0))
        if not callback.port:  # choose one now: it is part of the registered redirect URI
            await callback.listen()
            await callback.close()
        self.tokens.port = callback.port  # kept with the client, once one registers
        if options.get("clientId") and not stored.get("client"):
            client = {"client_id": options["clientId"], "redirect_uris": [callback.redirect_uri]}
            if "clientSecret" in options:
                client["client_secret"] = options["clientSecret"]
            self.tokens.write(client=client, port=callback.port)
        server = link.server

        async def redirect(url: str) -> None:
            from .server import setting

            if link.startup_scope is not None:  # a person is not held to the start-up timeout
                link.startup_scope.deadline = math.inf
            await callback.listen()
            server.authorize_url = url
            server.set("needs-auth")
            await self._tell(url)
            self._timeout = setting("ELELEM_MCP_AUTH_TIMEOUT", 300.0)

        async def answer() -> Any:
            try:
                result = await callback.wait(self._timeout)
            except TimeoutError as exc:
                raise NeedsAuth(
                    f"authorization needed: {exc}; open the URL, then /mcp restart {server.name}"
                ) from None
            server.set("starting")
            if link.startup_scope is not None:
                from .server import setting

                link.startup_scope.deadline = anyio.current_time() + (
                    self.config.timeout or setting("ELELEM_MCP_TIMEOUT", 30.0)
                )
            return result

        self._timeout = 300.0
        return provider(
            self.config.url or "", options, self.tokens, redirect, answer, callback.port
        )

    async def _tell(self, url: str) -> None:
        """The browser step: the face's on_authorize, else a line on stderr."""
        tell = getattr(self.manager, "on_authorize", None)
        if tell is None:
            notice(f"elelem: MCP server {self.config.name} needs authorization: open {url}")
            return
        result = tell(self.config.name, url)
        if hasattr(result, "__await__"):
            await result

    @staticmethod
    def gone(exc: BaseException) -> bool:
        """Does this failure mean the server is gone (connect again)?"""
        import httpx2
        from mcp.shared.exceptions import MCPError

        if isinstance(exc, httpx2.TransportError):
            return True
        if isinstance(exc, MCPError):
            return (
                exc.code == 404
                or "session" in exc.message.lower()
                and "terminated" in exc.message.lower()
            )
        return False
