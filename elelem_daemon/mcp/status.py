"""Status: what a session's MCP servers are doing, as data (faces) and as text (/mcp).

One server's status (docs/mcp.md, Status):
`{name, source, origin, transport, target, state, error, attempts, retryAt, pid, server,
tools, prompts, resources, problems, log, authorizeUrl}`.
"""

from __future__ import annotations

import time
from typing import Any


def server_status(
    server: Any, tools: list[str], commands: list[str], left_out: list[str]
) -> dict[str, Any]:
    config = server.config
    return {
        "name": server.name,
        "source": config.source,
        "origin": config.origin,
        "transport": config.transport,
        "target": config.describe(),
        "state": server.state,
        "error": server.error,
        "attempts": server.attempts,
        "retryAt": server.retry_at,
        "pid": server.process.pid
        if server.process is not None and server.state == "ready"
        else None,
        "server": server.info,
        "tools": tools,
        "prompts": [f"/{command}" for command in commands],
        "resources": bool(server.resources),
        "problems": list(server.toolset.problems) + list(left_out),
        "log": str(server.log_path) if server.log_path is not None else None,
        "authorizeUrl": server.authorize_url,
    }


NAMED = 8  # tool names on a server's line; `/mcp NAME` shows them all


def _named(tools: list[str], server: str) -> str:
    if not tools:
        return ""
    more = len(tools) - NAMED
    listed = ", ".join(tools[:NAMED])
    return f": {listed}, … (+{more}: /mcp {server})" if more > 0 else f": {listed}"


def _line(status: dict[str, Any]) -> str:
    where = f"{status['source']}, {status['transport']}"
    head = f"- **{status['name']}** ({where}): {status['state']}"
    state = status["state"]
    if state == "ready":
        parts = [f"{len(status['tools'])} tools" + _named(status["tools"], status["name"])]
        if status["prompts"]:
            parts.append(f"{len(status['prompts'])} prompts")
        if status["resources"]:
            parts.append("resources")
        head += ", " + ", ".join(parts)
    elif state == "retrying" and status["retryAt"]:
        wait = max(0.0, status["retryAt"] - time.time())
        head += f" (attempt {status['attempts']}, next in {wait:.0f} s)"
    elif state == "failed":
        head += f" after {status['attempts']} attempts (/mcp restart {status['name']})"
    return head


def text(report: dict[str, Any], name: str | None = None) -> str:
    """/mcp's answer: a line per server (more about one when `name` is given)."""
    servers = report["servers"]
    if not servers and not report["problems"]:
        return (
            "No MCP servers. Add them to ~/.config/elelem/mcp.json or the project's "
            ".mcp.json (docs/mcp.md)."
        )
    lines = []
    for status in servers:
        if name is not None and status["name"] != name:
            continue
        lines.append(_line(status))
        if status["error"] and status["state"] != "ready":
            lines.append(f"  - error: {status['error']}")
        if status["authorizeUrl"]:
            lines.append(f"  - authorize: {status['authorizeUrl']}")
        if name is not None:
            lines.append(f"  - runs: `{status['target']}`")
            if status["tools"]:
                lines.append(f"  - tools: {', '.join(status['tools'])}")
            if status["prompts"]:
                lines.append(f"  - prompts: {', '.join(status['prompts'])}")
        for problem in status["problems"]:
            lines.append(f"  - {problem}")
        if status["log"] and (name is not None or status["state"] != "ready"):
            lines.append(f"  - log: {status['log']}")
    if name is not None and not lines:
        return f"No MCP server named {name}. Servers: {', '.join(s['name'] for s in servers)}"
    if report["problems"] and name is None:
        lines.append("Configuration problems:")
        lines.extend(f"  - {problem}" for problem in report["problems"])
    return "\n".join(lines)
