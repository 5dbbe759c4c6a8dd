"""MCP: the time until a session's MCP tools are ready, with one stdio server
(informative; issue 19). Start-up without servers is the cold start figure: a session
without MCP servers must not pay for MCP, which coldstart A/B against a checkout
without it shows (`--daemon-python`).

`elelem daemon` with one server in the user's mcp.json (`servers/mcp_tools.py`, three
tools on the SDK's MCPServer): spawn → initialize → session/new → `/mcp` polled every
10 ms until the server is ready. Two rows: from session/new's answer (the session was
usable all along), and from the spawn. Baseline: a bare SDK client process that spawns
the same server, initializes and lists its tools (`mcp_tools.py client`), spawn → exit.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from ..context import SERVERS, Context, initialize, open_session
from ..table import Row, median

POLL = 0.01


def config_home(ctx: Context) -> Path:
    """A config folder of its own: the other figures' daemons start no MCP server."""
    home = Path(tempfile.mkdtemp(prefix="bench-mcp-config-"))
    folder = home / "elelem"
    folder.mkdir()
    server = {"command": ctx.python, "args": [str(SERVERS / "mcp_tools.py")]}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"bench": server}}))
    return home


async def ours(ctx: Context, config: Path) -> tuple[float, float]:
    """(ms from session/new's answer to the tools ready, ms from the spawn)."""
    start = time.perf_counter()
    # a state folder of its own too: the first run there approves the user's mcp.json (the
    # user's files that decide what runs are held once approved files exist: vetted.py)
    conn = await ctx.daemon(XDG_CONFIG_HOME=str(config), XDG_STATE_HOME=str(config / "state"))
    try:
        await initialize(conn)
        session = await open_session(conn, ctx.home)
        opened = time.perf_counter()
        deadline = opened + 120
        while time.perf_counter() < deadline:
            answer = await conn.request("session/command", {"sessionId": session, "line": "/mcp"})
            if "ready, 3 tools" in answer["output"]:
                break
            if "failed" in answer["output"]:
                raise RuntimeError(answer["output"])
            await asyncio.sleep(POLL)
        else:
            raise RuntimeError("the MCP server was not ready within 120 s")
        ready = time.perf_counter()
    finally:
        await conn.close()
    return (ready - opened) * 1000, (ready - start) * 1000


async def bare(ctx: Context) -> float:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        ctx.python,
        str(SERVERS / "mcp_tools.py"),
        "client",
        stdout=asyncio.subprocess.PIPE,
        env=ctx.env(),
        cwd=str(ctx.home),
    )
    out, _ = await process.communicate()
    if out.strip() != b"3":
        raise RuntimeError(f"the bare client listed {out!r}")
    return (time.perf_counter() - start) * 1000


async def run(ctx: Context) -> list[Row]:
    config = config_home(ctx)
    runs = ctx.n(7, 2)
    await ours(ctx, config)  # warm-up: bytecode, page cache
    await bare(ctx)
    mine, theirs = [], []
    for _ in range(runs):
        mine.append(await ours(ctx, config))
        theirs.append(await bare(ctx))
    after_new = median([m[0] for m in mine])
    from_spawn = median([m[1] for m in mine])
    baseline = median(theirs)
    note = f"median of {runs}; baseline: a bare SDK client, spawn → tools listed"
    return [
        Row(
            "MCP tools ready, one stdio server (after session/new)",
            after_new,
            "ms",
            baseline,
            note=note,
        ),
        Row(
            "MCP tools ready, one stdio server (from spawn)", from_spawn, "ms", baseline, note=note
        ),
    ]
