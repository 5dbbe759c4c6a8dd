"""McpServer: one configured server, from start to stop: its state, retries and calls.

A background task imports the MCP SDK (in a worker thread, once per process: it
takes ~0.7 s) and then connects through a `Link` (link.py): a stdio process or HTTP,
`initialize`, and the tool and prompt lists, all within the start-up timeout. Then the
server is `ready` and its tools serve calls from the session's turns, until the link
is lost. Whatever goes wrong (the command does not exist, the process crashes,
`initialize` never comes, stdout is garbage, the URL does not answer) is kept as
`error`, and the task tries again after a backoff (1 s, 2 s, 4 s, ... at most 60 s),
RETRIES times in a row; then the state is `failed` until `restart()`. A link that was
up for a minute starts the count again.

States: `starting`, `ready`, `retrying`, `needs-auth` (an HTTP server's OAuth waits
for the user), `failed`, `stopped`. Environment variables (for tests and slow
machines): ELELEM_MCP_TIMEOUT (start-up, 30 s; a server's `timeout` wins),
ELELEM_MCP_TOOL_TIMEOUT (one call, 600 s; `toolTimeout` wins), ELELEM_MCP_RETRIES (5),
ELELEM_MCP_BACKOFF (1 s, the first wait); a bad value of one keeps its default and
says so on stderr (`setting`, config.number).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base.config import number
from . import toolset
from .config import ServerConfig
from .results import McpResult, failure

log = logging.getLogger(__name__)

LINK = "elelem_daemon.mcp.link"
MAX_BACKOFF = 60.0
STABLE = 60.0  # seconds up after which failures count from zero again


MINIMUM = {  # the least value each setting takes; below it, the default (and a notice)
    "ELELEM_MCP_TIMEOUT": 0.1,
    "ELELEM_MCP_TOOL_TIMEOUT": 0.1,
    "ELELEM_MCP_AUTH_TIMEOUT": 0.1,
    "ELELEM_MCP_RETRIES": 1.0,
    "ELELEM_MCP_BACKOFF": 0.01,
}


def setting(name: str, default: float) -> float:
    """An ELELEM_MCP_* setting, read now (tests and slow machines change them), as every
    numeric setting is read (`config.number`): a value that is not a finite number at
    least MINIMUM keeps `default`, and a notice names it, once for that value."""
    return _read(name, os.environ.get(name, ""), default)


@functools.lru_cache(maxsize=64)
def _read(name: str, raw: str, default: float) -> float:
    return number(name, default, MINIMUM.get(name, 0.0), env={name: raw})


_link: Any = None


async def load_link() -> Any:
    """link.py and the SDK it imports, loaded in a worker thread the first time (two
    servers starting at once both wait for the whole import)."""
    global _link
    if _link is None:
        _link = await asyncio.to_thread(importlib.import_module, LINK)
    return _link


class McpServer:
    def __init__(
        self,
        config: ServerConfig,
        prefix: str,
        cwd: Path,
        log_path: Path | None,
        changed: Callable[[McpServer], None],
        remote: Any = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.prefix = prefix
        self.cwd = cwd
        self.log_path = log_path if config.transport == "stdio" else None
        self.changed = changed  # called on every change of state or listing
        self.remote = remote  # how to open an HTTP connection (remote.py); None for stdio
        self.state = "starting"
        self.error: str | None = None
        self.attempts = 0
        self.retry_at: float | None = None
        self.link: Any = None  # the live Link while there is one
        self.process: Any = None  # a stdio server's ServerProcess (the last one)
        self.info: dict[str, Any] | None = None
        self.instructions: str | None = None
        self.tools: list[Any] = []
        self.prompts: list[Any] = []
        self.resources = False
        self.toolset = toolset.ToolSet()
        self.authorize_url: str | None = None
        self.lost = asyncio.Event()  # set to end the current link (restart, a gone HTTP server)
        self._restart = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> None:
        if self._task is None and not self._closing:
            self._task = asyncio.ensure_future(self._run())
            self._task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        """A task that died of a bug of ours leaves the server failed, not starting."""
        if task.cancelled() or self._closing or task.exception() is None:
            return
        log.error("mcp: %s: internal error", self.name, exc_info=task.exception())
        self.link = None
        self._task = None
        self.set("failed", f"internal error: {task.exception()}")

    @property
    def settled(self) -> bool:
        """Up, or not trying by itself any more: ready, failed, needs-auth, stopped."""
        return self.state not in ("starting", "retrying")

    def restart(self) -> None:
        """Connect again now (a failed server too); a ready one is reconnected."""
        self._restart.set()
        self.lost.set()
        if self._task is None:
            self.start()

    async def aclose(self) -> None:
        """Stop: the task cancelled and waited for (10 s at most; how it ended is its
        own, `_ended`), then the process stopped. A cancel of the closer goes on once
        the process is killed (SIGKILL) and its stop, quick then, is over (shielded: a
        second cancel leaves it to finish)."""
        self._closing = True
        task, self._task = self._task, None
        try:
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait([task], timeout=10)
            if self.process is not None:
                await self.process.stop()
        except asyncio.CancelledError:  # the closer's own: nothing is left behind
            process = self.process
            if process is not None:
                process.kill()
                await asyncio.shield(asyncio.ensure_future(process.stop()))
            self.link = None
            self.set("stopped")
            raise
        self.link = None
        self.set("stopped")

    def kill(self) -> None:
        """Synchronous last resort (a face closing without awaiting): SIGKILL the process."""
        self._closing = True
        if self.process is not None:
            self.process.kill()
        if self._task is not None:
            self._task.cancel()
        self.link = None
        self.state = "stopped"

    def set(self, state: str, error: str | None = None) -> None:
        self.state = state
        if error is not None or state == "ready":
            self.error = error
        try:
            self.changed(self)
        except Exception:  # a listener's fault is not the server's
            log.exception("mcp: change listener failed")

    async def _run(self) -> None:
        while not self._closing:
            self.attempts += 1
            self.lost = asyncio.Event()
            self._restart.clear()
            up_since: list[float] = []
            self.set("starting")
            try:
                link = await load_link()
                await link.Link(self).run(up_since)
                error = "the connection ended"
            except asyncio.CancelledError:
                me = asyncio.current_task()
                if self._closing or (me is not None and me.cancelling()):
                    raise
                error = "cancelled"
            except Exception as exc:
                link_module = _link
                error = link_module.describe(exc) if link_module else f"{type(exc).__name__}: {exc}"
                if link_module is not None and link_module.needs_auth(exc):
                    self.link = None
                    self.set("needs-auth", error)
                    await self._restart.wait()
                    self.attempts = 0
                    continue
            self.link = None
            if self._closing:
                break
            if up_since and time.monotonic() - up_since[0] > STABLE:
                self.attempts = 1
            error = self._explained(error)
            (log.warning if self.attempts == 1 else log.info)("mcp: %s: %s", self.name, error)
            if self._restart.is_set():
                self.attempts = 0
                continue
            if self.attempts >= int(setting("ELELEM_MCP_RETRIES", 5)):
                self.retry_at = None
                self.set("failed", error)
                log.warning("mcp: %s: failed after %d attempts", self.name, self.attempts)
                await self._restart.wait()
                self.attempts = 0
                continue
            delay = min(setting("ELELEM_MCP_BACKOFF", 1.0) * 2 ** (self.attempts - 1), MAX_BACKOFF)
            self.retry_at = time.time() + delay
            self.set("retrying", error)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._restart.wait()
            self.retry_at = None

    def _explained(self, error: str) -> str:
        """The error, with what the process said or did that explains it."""
        process = self.process
        if process is None:
            return error
        if process.returncode is not None and "exit" not in error and "killed" not in error:
            error = f"{error} ({process.ending()})"
        if process.garbage:
            error += (
                f"; it wrote {process.garbage} line(s) to stdout that are not JSON-RPC, "
                f"the first: {process.sample!r}"
            )
        if process.tail:
            error += f"; stderr: {process.tail[-1]}"
        return error

    # -- calls -------------------------------------------------------------------
    def unavailable(self) -> str:
        why = f": {self.error}" if self.error else ""
        return f"MCP server {self.name} is not connected ({self.state}{why})"

    @property
    def tool_timeout(self) -> float:
        return self.config.tool_timeout or setting("ELELEM_MCP_TOOL_TIMEOUT", 600.0)

    async def call(self, tool: str, args: dict[str, Any]) -> McpResult:
        link = self.link
        if link is None or self.state != "ready":
            return failure(self.unavailable())
        return await link.call(tool, args)

    async def read(self, uri: str | None) -> dict[str, Any]:
        link = self.link
        if link is None or self.state != "ready":
            return {"error": self.unavailable()}
        result: dict[str, Any] = await link.read(uri)
        return result

    async def prompt(self, name: str, arguments: dict[str, str]) -> Any:
        link = self.link
        if link is None or self.state != "ready":
            raise RuntimeError(self.unavailable())
        return await link.prompt(name, arguments)
