"""Memory: RSS of the daemon idle, after 100 open sessions, after a 10,000-message session.

The baseline is the bare echo server's RSS (a Python process that imported asyncio);
a second row compares the idle daemon with the ACP face after the same first session
(informative since issue 30: its ≤ 1.2× target needed the stand-in for lsprotocol; the
memory target against the real peers is `--peers`'s).
The long session is built from `!echo` turns: each adds a user and an assistant message.
"""

from __future__ import annotations

import asyncio

from ..context import Context, initialize, open_session
from ..table import Row

IDLE_MB, SESSIONS_MB = 60.0, 30.0


async def settled_mb(conn) -> float:  # noqa: ANN001 - a wire.Conn
    await asyncio.sleep(0.2)
    return conn.rss_kb() / 1024


async def run(ctx: Context) -> list[Row]:
    sessions, messages = 100, ctx.n(10_000, 1_000)
    echo = await ctx.echo()
    try:
        await initialize(echo)
        bare = await settled_mb(echo)
    finally:
        await echo.close()
    acp = await ctx.acp()
    try:
        await acp.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        await acp.request("session/new", {"cwd": str(ctx.home), "mcpServers": []})
        acp_idle = await settled_mb(acp)
    finally:
        await acp.close()
    conn = await ctx.daemon()
    try:
        await initialize(conn)
        await open_session(conn, ctx.home)  # the same first session as the ACP face's
        await conn.request("session/list", {})  # a first other request: pygls is loaded
        idle = await settled_mb(conn)
        for _ in range(sessions):
            await open_session(conn, ctx.home)
        opened = await settled_mb(conn)
        long = await open_session(conn, ctx.home)
        for i in range(messages // 2):
            await conn.request("session/turn", {"sessionId": long, "text": f"!echo reply {i}"})
        after = await settled_mb(conn)
    finally:
        await conn.close()
    return [
        Row(
            "memory, idle daemon (RSS)",
            idle,
            "MB",
            bare,
            target=f"≤ {IDLE_MB:g} MB",
            ok=idle <= IDLE_MB,
            note="baseline: bare echo server",
        ),
        Row(
            "memory, idle after a session, × ACP face",
            idle,
            "MB",
            acp_idle,
            note="informative; after initialize, session/new, session/list; baseline: ACP face",
        ),
        Row(
            f"memory, +{sessions} open sessions",
            opened - idle,
            "MB",
            target=f"≤ +{SESSIONS_MB:g} MB",
            ok=opened - idle <= SESSIONS_MB,
        ),
        Row(
            f"memory, +1 session of {messages:,} messages",
            after - opened,
            "MB",
            note=f"{(after - opened) * 1024 * 1024 / messages:,.0f} B per message",
        ),
    ]
