"""OAuth for HTTP servers: the SDK's client flow, our token file, our browser step.

An HTTP server without an `Authorization` header in its config gets the SDK's
`OAuthClientProvider`: a 401 from the server starts discovery, dynamic client
registration (or the config's `oauth.clientId`/`clientSecret`), then the
authorization-code flow with PKCE. Its browser step is ours:
- the redirect URI is `http://127.0.0.1:PORT/callback`, served by `Callback`, a
  one-request loopback HTTP server that runs only while a flow waits (PORT:
  `oauth.callbackPort`, else the one kept in the token file, else a free one);
- the URL to open goes to the manager's `on_authorize(server, url)`, which a face
  implements (an `input/ask` or an ACP message); without one it is printed on
  stderr; the server is `needs-auth` with the URL in its status meanwhile;
- the user has AUTH_TIMEOUT seconds (ELELEM_MCP_AUTH_TIMEOUT) to finish.
Tokens and the registered client are kept in `STATE/mcp/oauth/PREFIX-HASH.json`
(HASH of the server's URL), mode 0600, written whole (a temporary file renamed), and
refreshed by the SDK when they expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from ..base import regular

HEAD_CAP = 8192
ANSWER = (
    "<!doctype html><title>elelem</title><p>{text} You can close this tab and go back "
    "to elelem.</p>"
)


class TokenFile:
    """The SDK's TokenStorage in one JSON file, mode 0600."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port: int | None = None  # the redirect URI's, written with the client

    def read(self) -> dict[str, Any]:
        try:
            data = json.loads(regular.text(self.path, 1 << 20))  # never waits on a FIFO
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def write(self, **changes: Any) -> None:
        data = {**self.read(), **changes}
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.chmod(temporary, 0o600)
        os.replace(temporary, self.path)

    async def get_tokens(self) -> OAuthToken | None:
        raw = self.read().get("tokens")
        try:
            return OAuthToken.model_validate(raw) if raw else None
        except ValueError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.write(tokens=tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = self.read().get("client")
        try:
            return OAuthClientInformationFull.model_validate(raw) if raw else None
        except ValueError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.write(client=client_info.model_dump(mode="json", exclude_none=True), port=self.port)


class Callback:
    """The redirect URI's server: answers one `GET /callback?code=&state=`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def listen(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
            self.port = self._server.sockets[0].getsockname()[1]
        self._result = asyncio.get_running_loop().create_future()

    async def wait(self, timeout: float) -> AuthorizationCodeResult:
        assert self._result is not None
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.shield(self._result)
        except TimeoutError:
            raise TimeoutError(f"no authorization within {timeout:g}s") from None
        finally:
            await self.close()

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1):
                    await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            writer.close()
            return
        line = head[:HEAD_CAP].split(b"\r\n", 1)[0].decode("latin-1").split()
        target = urlsplit(line[1]) if len(line) >= 2 and line[0] == "GET" else None
        query = parse_qs(target.query) if target else {}
        status, text = "404 Not Found", "Not the callback."
        if target is not None and target.path == "/callback":
            code, error = _first(query, "code"), _first(query, "error")
            if code and self._result is not None and not self._result.done():
                self._result.set_result(
                    AuthorizationCodeResult(
                        code=code, state=_first(query, "state"), iss=_first(query, "iss")
                    )
                )
                status, text = "200 OK", "Authorized."
            else:
                status, text = "400 Bad Request", f"Not authorized ({error or 'no code'})."
        body = ANSWER.format(text=text).encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()


def _first(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def provider(
    url: str, options: dict[str, Any], store: TokenFile, redirect: Any, callback: Any, port: int
) -> OAuthClientProvider:
    """The SDK's provider for one server; `redirect(url)` and `callback()` are the
    browser step (see Remote)."""
    metadata = OAuthClientMetadata(
        client_name="elelem",
        redirect_uris=[f"http://127.0.0.1:{port}/callback"],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=options.get("scope"),
        token_endpoint_auth_method="client_secret_post" if options.get("clientSecret") else "none",
    )
    return OAuthClientProvider(url, metadata, store, redirect, callback)
