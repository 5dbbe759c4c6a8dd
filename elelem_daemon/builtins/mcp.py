"""Built-in MCP support: a setup block that gives a session the servers of its config
files, and the `/mcp` command. The work is in `elelem_daemon/mcp/` (docs/mcp.md).

A session whose files name no server costs two file lookups: the MCP SDK is imported
only when a server is configured. Problems in the files are printed on stderr, one
line each (`elelem: mcp: FILE: mcpServers.NAME.KEY: ...`), and shown by `/mcp`.
"""

from __future__ import annotations

from ..base.log import notice
from ..mcp import config
from ..ports import SessionView
from ..registry import Plugin

USAGE = "Usage: /mcp [NAME] | /mcp restart NAME"


def register(plugin: Plugin) -> None:
    @plugin.setup
    def mcp(session: SessionView) -> None:
        servers, problems = config.load(session.cwd, trusted=session.project)
        for problem in problems:
            notice(f"elelem: mcp: {problem}")
        if not servers and not problems and getattr(session, "mcp", None) is None:
            return
        from ..mcp.manager import manager_of

        manager = manager_of(session)
        manager.configure(servers, problems)
        manager.attach()

    @plugin.on("turn_start")
    async def servers_first(session: SessionView, turn_id: int) -> None:
        """Every face: a turn waits a little for servers still starting (manager.py)."""
        manager = getattr(session, "mcp", None)
        if manager is not None:
            await manager.first_turn(session.output.say)

    def names(session: SessionView) -> list[str]:
        manager = getattr(session, "mcp", None)
        return ["restart", *manager.servers] if manager is not None else []

    @plugin.command("mcp", "MCP servers: state, tools, errors", names)
    def mcp_command(session: SessionView, args: str | None) -> None:
        from ..mcp.status import text

        manager = getattr(session, "mcp", None)
        report = manager.status() if manager is not None else {"servers": [], "problems": []}
        words = (args or "").split()
        if not words:
            session.output.say(text(report), "markdown")
        elif words[0] == "restart" and len(words) == 2 and manager is not None:
            server = manager.servers.get(words[1])
            if server is None:
                session.output.say(f"No MCP server named {words[1]}", "error")
                return
            server.restart()
            session.output.say(f"  → restarting {words[1]}")
        elif len(words) == 1:
            session.output.say(text(report, words[0]), "markdown")
        else:
            session.output.say(USAGE, "error")
