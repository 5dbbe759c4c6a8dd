"""Link: one live connection to a server, on the MCP SDK's ClientSession.

`run()` opens the transport (a `ServerProcess` for stdio, remote.py for HTTP and SSE),
enters a ClientSession, and within the start-up timeout runs `initialize` and lists
the tools and prompts (at most MAX_PAGES pages each), which become the server's
ToolSet (built in a worker thread: schemas are checked there). Then it marks the
server ready and waits: a `list_changed` notification lists that kind again; the end
of the connection (stdout closed, the process gone, a call that found an HTTP server
gone, a restart) ends `run()` with `Lost`, and the transport is closed on the way
out (a stdio server's process group is stopped).

Calls (`call`, `read`, `prompt`) run in the caller's task (a turn's): cancelling
that task makes the SDK send the server `notifications/cancelled`. A failed call
comes back as a clear message, never an exception.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from .. import __version__
from . import toolset
from .process import ServerProcess, StartError
from .remote import NeedsAuth
from .results import McpResult, failure, read_result, tool_result

# The SDK logs its own view of failures (tracebacks included) to loggers without
# handlers, which Python would print on stderr; elelem reports them itself (status, /mcp).
# Not passed on to the root logger either (whose handler is elelem's: log.py).
for _name in ("mcp", "client"):
    logging.getLogger(_name).addHandler(logging.NullHandler())
    logging.getLogger(_name).propagate = False

MAX_PAGES = 20
GRACE = 5.0  # past a call's timeout, for the SDK's own to answer first
CHANGES: dict[type, str] = {
    types.ToolListChangedNotification: "tools",
    types.PromptListChangedNotification: "prompts",
    types.ResourceListChangedNotification: "resources",
}


class Lost(Exception):
    """The connection ended (the message says how)."""


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside exception groups, and the cause an OAuth error hides."""
    while True:
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        elif not isinstance(exc, NeedsAuth) and isinstance(
            exc.__cause__ or exc.__context__, NeedsAuth
        ):
            exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        else:
            return exc


def needs_auth(exc: BaseException) -> bool:
    """Is the server waiting for the user's authorization (do not retry by itself)?"""
    return isinstance(_leaf(exc), NeedsAuth)


def describe(exc: BaseException) -> str:
    """One line for an exception, from inside exception groups too."""
    exc = _leaf(exc)
    if isinstance(exc, MCPError):
        return exc.message
    text = str(exc).strip()
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"the server answered HTTP {exc.response.status_code} to {exc.request.url}"
    if isinstance(exc, httpx2.TransportError):
        return f"cannot reach the server ({text or type(exc).__name__})"
    if isinstance(exc, Lost | StartError | TimeoutError | NeedsAuth) and text:
        return text
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


class Link:
    def __init__(self, server: Any) -> None:
        self.server = server
        self.session: ClientSession | None = None
        self.startup_scope: anyio.CancelScope | None = None
        self._wake = asyncio.Event()
        self._relist: set[str] = set()

    async def run(self, up_since: list[float]) -> None:
        server = self.server
        timeout = server.config.timeout or _startup_timeout()
        async with AsyncExitStack() as stack:
            if server.config.transport == "stdio":
                process = server.process = ServerProcess(server.config, server.cwd, server.log_path)
                stack.push_async_callback(process.stop)
                with anyio.fail_after(timeout):
                    read, write = await process.start()
                ended = process.lost
            else:
                read, write = await stack.enter_async_context(server.remote.open(self))
                ended = asyncio.Event()
            session = ClientSession(
                read,
                write,
                message_handler=self._on_message,
                client_info=types.Implementation(name="elelem", version=__version__),
            )
            await stack.enter_async_context(session)
            with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                self.startup_scope = scope
                try:
                    await self._initialize(session)
                except MCPError as exc:
                    if exc.code != types.CONNECTION_CLOSED:
                        raise
                    raise Lost("closed the connection during start-up") from None
            self.startup_scope = None
            if scope.cancelled_caught:
                raise TimeoutError(f"did not answer initialize within {timeout:g}s")
            self.session = session
            server.link = self
            up_since.append(time.monotonic())
            server.authorize_url = None
            server.set("ready")
            while True:
                self._wake.clear()
                if ended.is_set() or server.lost.is_set():
                    raise Lost(f"connection lost ({self._ending()})")
                if self._relist:
                    kinds, self._relist = self._relist, set()
                    with anyio.fail_after(timeout):
                        await self._list(session, kinds)
                    server.set("ready")
                    continue
                waiters = [
                    asyncio.ensure_future(e.wait()) for e in (ended, server.lost, self._wake)
                ]
                try:
                    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waiter in waiters:
                        waiter.cancel()

    def _ending(self) -> str:
        process = self.server.process
        if self.server.config.transport == "stdio" and process is not None:
            return str(process.ending())
        return "the server went away"

    async def _initialize(self, session: ClientSession) -> None:
        result = await session.initialize()
        info = result.server_info
        self.server.info = {"name": info.name, "version": info.version} if info else None
        self.server.instructions = result.instructions
        await self._list(session, {"tools", "prompts", "resources"})

    async def _list(self, session: ClientSession, kinds: set[str]) -> None:
        server, caps = self.server, session.server_capabilities
        if "tools" in kinds:
            has = caps is not None and caps.tools is not None
            server.tools = await _pages(session.list_tools, "tools") if has else []
        if "prompts" in kinds:
            has = caps is not None and caps.prompts is not None
            server.prompts = await _pages(session.list_prompts, "prompts") if has else []
        if "resources" in kinds:
            server.resources = caps is not None and caps.resources is not None
        if kinds & {"tools", "prompts"}:
            built = await asyncio.to_thread(
                toolset.build, server.name, server.prefix, server.tools, server.prompts
            )
            for tool in built.tools:
                tool.handler = functools.partial(server.call, tool.remote)
            server.toolset = built

    async def _on_message(self, message: Any) -> None:
        kind = CHANGES.get(type(message))
        if kind is not None:
            self._relist.add(kind)
            self._wake.set()

    # -- calls -------------------------------------------------------------------
    async def call(self, tool: str, args: dict[str, Any]) -> McpResult:
        assert self.session is not None
        timeout = self.server.tool_timeout
        try:
            with anyio.fail_after(timeout + GRACE):  # also when the request cannot be written
                result = await self.session.call_tool(tool, args, read_timeout_seconds=timeout)
        except Exception as exc:
            return failure(await self._failed(exc, f"did not answer within {timeout:g}s"))
        return tool_result(result)

    async def read(self, uri: str | None) -> dict[str, Any]:
        assert self.session is not None
        timeout = self.server.tool_timeout
        try:
            with anyio.fail_after(timeout):
                if uri is None:
                    listed = await _pages(self.session.list_resources, "resources")
                    return {
                        "server": self.server.name,
                        "resources": [
                            {"uri": str(r.uri), "name": r.name, "mimeType": r.mime_type}
                            for r in listed[:200]
                        ],
                    }
                return read_result(uri, await self.session.read_resource(uri))
        except Exception as exc:
            return {"error": await self._failed(exc, f"did not answer within {timeout:g}s")}

    async def prompt(self, name: str, arguments: dict[str, str]) -> Any:
        assert self.session is not None
        try:
            with anyio.fail_after(_startup_timeout()):
                return await self.session.get_prompt(name, arguments)
        except Exception as exc:
            raise RuntimeError(await self._failed(exc, "did not answer in time")) from None

    async def _failed(self, exc: Exception, late: str) -> str:
        """The message for a failed request; a lost connection ends the link."""
        server = self.server
        if isinstance(exc, TimeoutError) or (
            isinstance(exc, MCPError) and exc.code == types.REQUEST_TIMEOUT
        ):
            return f"MCP server {server.name} {late} (the request was cancelled)"
        if isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
            server.lost.set()
            process = server.process
            if process is not None:  # give the exit a moment to be seen
                for _ in range(20):
                    if process.returncode is not None:
                        break
                    await asyncio.sleep(0.025)
            where = f"; see {server.log_path}" if server.log_path else ""
            return f"MCP server {server.name} closed the connection ({self._ending()}{where})"
        if server.remote is not None and server.remote.gone(exc):
            server.lost.set()
        return f"MCP server {server.name}: {describe(exc)}"


def _startup_timeout() -> float:
    from .server import setting

    return setting("ELELEM_MCP_TIMEOUT", 30.0)


async def _pages(lister: Any, field: str) -> list[Any]:
    items: list[Any] = []
    cursor = None
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await lister(params=params)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            break
    return items
