"""McpManager: a session's MCP servers, and what they add to its toolbox and commands.

One per session (`manager_of(session)`, kept as `session.mcp`), made only when the
session has servers, so a session without any never imports the MCP SDK. It merges
the files' servers (`configure`) with the face's (`add`), starts each in the
background (the session is usable at once) and keeps the session in step with them:
- a server's tools are in the toolbox while the server is ready or coming back
  (starting, retrying: a call then says why it cannot run), and gone once it failed
  or stopped; a tool whose name another (non-MCP) tool has is left out, noted;
- its prompts are slash commands `/PREFIX:PROMPT args`, which run the prompt's text
  as a turn (earlier messages of the prompt are added to the conversation first);
- the `resource` tool (`server`, `uri`; without `uri` it lists) exists while a ready
  server offers resources.
The MCP tools together stay within a byte budget (budget.py: the largest servers'
largest tools are cut, each server says so in its status), worked out again on every
change. Listeners (`listeners.append(fn)`, `fn(manager)`) hear of every change: a face sends
its tools or commands update from there. `status()` is what `/mcp` and a face's
session/new show. `aclose()` stops every server (their process groups die); the
session's `close()` calls it (`manager_of` puts it among the session's `closers`);
`kill()` is the synchronous last resort. Cancelling a turn needs nothing here: the
cancelled call sends the server `notifications/cancelled` itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..tool import Tool
from . import names
from .config import Problem, ServerConfig, merge

if TYPE_CHECKING:
    from .server import McpServer

log = logging.getLogger(__name__)
Listener = Callable[["McpManager"], Any]
Authorize = Callable[[str, str], Any]  # (server name, URL to open) -> None | awaitable
RESOURCE = "resource"
OFFERING = ("ready", "starting", "retrying", "needs-auth")  # states whose tools are offered
FIRST_WAIT = 30.0  # seconds a session's first turn may wait for servers (ELELEM_MCP_FIRST_WAIT)


class ResourceTool(Tool):
    permission = "ask"


class McpManager:
    def __init__(self, session: Any) -> None:
        self.session = session
        self.files: list[ServerConfig] = []
        self.client: list[ServerConfig] = []
        self.problems: list[Problem] = []
        self.client_problems: list[Problem] = []
        self.servers: dict[str, McpServer] = {}
        self.listeners: list[Listener] = []
        self.on_authorize: Authorize | None = None
        self._waited = False  # the session's first turn waited (first_turn): none will again
        self._registered: dict[str, tuple[list[str], list[str]]] = {}
        self._left_out: dict[str, list[str]] = {}
        self._cut: dict[str, list[str]] = {}  # tools left out over the budget (budget.py)
        self._cut_problem: dict[str, str] = {}
        self._settled = asyncio.Event()
        self._stopping: set[asyncio.Task[None]] = set()

    # -- configuration -----------------------------------------------------------
    def configure(self, files: Iterable[ServerConfig], problems: Iterable[Problem] = ()) -> None:
        """The servers of the files (user, project), as config.load found them."""
        self.files, self.problems = list(files), list(problems)
        self._reconcile()

    def add(self, servers: Iterable[ServerConfig], problems: Iterable[Problem] = ()) -> None:
        """Servers a face passes (session/new, session/load): they win over the files'."""
        self.client = merge(self.client, servers)
        self.client_problems += list(problems)
        self._reconcile()

    @property
    def configs(self) -> list[ServerConfig]:
        return merge(self.files, self.client)

    def _reconcile(self) -> None:
        wanted = {config.name: config for config in self.configs}
        prefixes = names.prefixes(wanted)
        for name, server in list(self.servers.items()):
            if not server.config.same(wanted.get(name)) or prefixes.get(name) != server.prefix:
                self._drop(name)
        for name, config in wanted.items():
            if name not in self.servers:
                self._spawn(config, prefixes[name])
        self._rebalance()
        self._check_settled()

    def _spawn(self, config: ServerConfig, prefix: str) -> None:
        from ..base.config import state_dir
        from .server import McpServer  # the SDK loads here, with the first server

        home = state_dir() / "mcp"
        remote = None
        if config.transport != "stdio":
            from .remote import Remote

            remote = Remote(config, home / "oauth", self)
        server = McpServer(
            config, prefix, self.session.cwd, home / f"{prefix}.log", self._changed, remote
        )
        self.servers[config.name] = server
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # started by start(), from a coroutine
        server.start()

    def start(self) -> None:
        """Start what could not be started without a running event loop."""
        for server in self.servers.values():
            server.start()

    def _drop(self, name: str) -> None:
        server = self.servers.pop(name)
        self._unregister(name)
        try:
            task = asyncio.get_running_loop().create_task(server.aclose())
        except RuntimeError:
            server.kill()
            return
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    # -- keeping the session in step ---------------------------------------------
    def attach(self) -> None:
        """Register every server's tools and commands again (after /reload cleared them)."""
        self._registered.clear()
        self._budget()
        for server in self.servers.values():
            self._sync(server)
        self._sync_resource_tool()

    def _changed(self, server: McpServer) -> None:
        if self.servers.get(server.name) is not server:
            return  # a dropped server stopping
        self._rebalance(server.name)
        self._sync_resource_tool()
        self._check_settled()
        for listener in list(self.listeners):
            try:
                result = listener(self)
                if asyncio.iscoroutine(result):
                    asyncio.ensure_future(result)
            except Exception:
                log.exception("mcp: listener failed")

    def _unregister(self, name: str) -> None:
        tools, commands = self._registered.pop(name, ([], []))
        for tool in tools:
            if getattr(self.session.toolbox.resolve(tool), "server", None) == name:
                self.session.toolbox.remove(tool)
        for command in commands:
            self.session.commands.remove(command)

    def _budget(self) -> set[str]:
        """Work out which tools the budget leaves out (budget.py); the names of the
        servers whose cut changed."""
        from . import budget

        offered = {
            name: server.toolset.tools
            for name, server in self.servers.items()
            if server.state in OFFERING
        }
        limit = budget.cap()
        cut = budget.cut(offered, limit)
        total = sum(tool.size for tools in offered.values() for tool in tools)
        changed = {
            name for name in set(cut) | set(self._cut) if cut.get(name) != self._cut.get(name)
        }
        self._cut = cut
        self._cut_problem = {
            name: budget.problem(len(left), len(offered[name]), total, limit)
            for name, left in cut.items()
        }
        return changed

    def _rebalance(self, changed: str | None = None) -> None:
        """Recompute the budget; sync the server that changed and every server whose cut
        changed with it."""
        for name in self._budget() | ({changed} if changed else set()):
            if name in self.servers:
                self._sync(self.servers[name])

    def _sync(self, server: McpServer) -> None:
        self._unregister(server.name)
        if server.state not in OFFERING:
            return
        toolbox, commands = self.session.toolbox, self.session.commands
        tools, added, left_out = [], [], []
        cut = set(self._cut.get(server.name, ()))
        if cut:
            left_out.append(self._cut_problem[server.name])
        for tool in server.toolset.tools:
            if tool.remote in cut:
                continue
            if tool.name in toolbox and not hasattr(toolbox.resolve(tool.name), "server"):
                left_out.append(f"tool {tool.remote} is left out: {tool.name} is another tool")
                continue
            toolbox.register(tool)
            tools.append(tool.name)
        for prompt in server.toolset.prompts:
            if prompt.command in commands:
                left_out.append(f"prompt {prompt.remote} is left out: /{prompt.command} exists")
                continue
            handler = self._prompt_handler(server, prompt)
            commands.register(prompt.command, prompt.description, None, handler)
            added.append(prompt.command)
        self._registered[server.name] = (tools, added)
        self._left_out[server.name] = left_out

    def _prompt_handler(self, server: McpServer, prompt: Any) -> Callable[[str | None], Any]:
        async def run(args: str | None) -> None:
            from .results import prompt_messages
            from .toolset import prompt_arguments

            values, problem = prompt_arguments(prompt, args)
            if problem is not None:
                self.session.output.say(problem, "error")
                return
            messages = prompt_messages(await server.prompt(prompt.remote, values))
            if not messages:
                self.session.output.say(f"/{prompt.command}: the prompt is empty", "error")
                return
            *before, (role, text) = messages
            for earlier_role, earlier in before:
                self.session.conversation.add(_role(earlier_role), earlier)
            if role == "assistant":
                self.session.conversation.add("assistant", text)
                self.session.output.say(text, "markdown")
                return
            await self.session.turn(text)

        return run

    def _sync_resource_tool(self) -> None:
        offering = [s.name for s in self.servers.values() if s.resources and s.state == "ready"]
        toolbox = self.session.toolbox
        current = toolbox.resolve(RESOURCE)
        if not offering:
            if isinstance(current, ResourceTool):
                toolbox.remove(RESOURCE)
            return
        if RESOURCE in toolbox and not isinstance(current, ResourceTool):
            return  # another plugin's `resource`

        async def read(args: dict[str, Any]) -> dict[str, Any]:
            server = self.servers.get(args["server"])
            if server is None or not server.resources:
                return {"error": f"no MCP server {args['server']} offers resources"}
            return await server.read(args.get("uri"))

        toolbox.register(
            ResourceTool(
                RESOURCE,
                "Read a resource of an MCP server by its URI (without uri: list them)",
                {
                    "server": {"type": "string", "enum": offering, "description": "MCP server"},
                    "uri": {"type": "string", "description": "The resource's URI"},
                },
                ["server"],
                handler=read,
            )
        )

    # -- what is going on -------------------------------------------------------
    def _check_settled(self) -> None:
        if all(server.settled for server in self.servers.values()):
            self._settled.set()
        else:
            self._settled.clear()

    @property
    def start_timeout(self) -> float:
        """How long a server may take to start (ELELEM_MCP_TIMEOUT, 30 s; server.setting):
        the bound `elelem ask` waits for them."""
        from .server import setting

        return setting("ELELEM_MCP_TIMEOUT", 30.0)

    def starting(self) -> list[str]:
        """The servers in their first start (not yet ready, never failed)."""
        return [name for name, server in self.servers.items() if server.state == "starting"]

    async def first_turn(self, say: Callable[[str, str], Any]) -> None:
        """The one rule of every face for servers still starting: before the session's
        first turn, and never again, wait for the servers in their first start whose
        process is alive, until each is ready or has failed, at most
        ELELEM_MCP_FIRST_WAIT seconds (30: long enough for `npx` or `uvx` to fetch a
        package), so their tools are there for it. One progress line says what it waits
        for (`say(text, "info")`), one more names those it goes on without. A cancel of
        the turn ends the wait. Later turns never wait: a server that never answers
        costs one wait per session."""
        from .server import setting

        if self._waited:
            return
        self._waited = True
        waited = self._coming()
        if not waited:
            return
        say(f"waiting for MCP servers to start: {', '.join(waited)}", "info")
        deadline = time.monotonic() + setting("ELELEM_MCP_FIRST_WAIT", FIRST_WAIT)
        while self._coming() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        late = [
            s for s in self.status()["servers"] if s["name"] in waited and s["state"] != "ready"
        ]
        if late:
            named = "; ".join(
                f"{s['name']} ({s['state']}{': ' + s['error'] if s['error'] else ''})" for s in late
            )
            say(f"going on without these MCP servers' tools: {named}", "info")

    def _coming(self) -> list[str]:
        """The servers in their first start whose process (a stdio server's) is alive."""
        return [
            name
            for name in self.starting()
            if getattr(self.servers[name].process, "returncode", None) is None
        ]

    async def ready(self, timeout: float = 60.0) -> bool:
        """Wait until every server is ready or has stopped trying (failed, needs-auth);
        True then, False after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not self._settled.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                async with asyncio.timeout(left):
                    await self._settled.wait()
            except TimeoutError:
                return False
            self._check_settled()
        return True

    def status(self) -> dict[str, Any]:
        """`{servers: [...], problems: [...]}`: the shape /mcp and session/new show
        (docs/mcp.md, Status)."""
        from .status import server_status

        return {
            "servers": [
                server_status(
                    server,
                    *self._registered.get(server.name, ([], [])),
                    self._left_out.get(server.name, []),
                )
                for server in self.servers.values()
            ],
            "problems": [str(p) for p in self.problems + self.client_problems],
        }

    # -- the end -----------------------------------------------------------------
    async def aclose(self) -> None:
        """Stop every server (stdin closed, then its process group signalled). Cancelled
        (a session's bounded close ran out), it kills what is left at once."""
        servers, self.servers = list(self.servers.values()), {}
        for server in servers:
            self._unregister(server.name)
        self._sync_resource_tool()
        try:
            await asyncio.gather(*(server.aclose() for server in servers), *self._stopping)
        except asyncio.CancelledError:
            for server in servers:
                server.kill()
            raise

    def kill(self) -> None:
        for server in self.servers.values():
            server.kill()
        self.servers = {}


def _role(role: str) -> str:
    return role if role in ("user", "assistant") else "user"


def manager_of(session: Any) -> McpManager:
    """The session's manager, made on first use."""
    manager = getattr(session, "mcp", None)
    if not isinstance(manager, McpManager):
        manager = session.mcp = McpManager(session)
        closers = getattr(session, "closers", None)
        if isinstance(closers, list):  # Session.close stops the servers
            closers.append(manager.aclose)
    return manager
