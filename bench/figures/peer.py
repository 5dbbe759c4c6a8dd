"""Peer: the same cold-start and stream-throughput work through an agent built on the
official ACP Python SDK (`servers/peer_agent.py`), side by side with the daemon.

The ratio is daemon / peer: below 1 is a faster start, above 1 a faster stream. As for
the cold start, an informative row goes on to the first `session/new` answer.

The cold start's target ("faster than the peer") went with issue 30: the daemon answers
`initialize` once pygls is imported as shipped (lsprotocol's types with it), about as
late as the SDK agent answers after importing pydantic; only the stand-in for lsprotocol
and the early responder made it faster. The row stays, informative; the start-up figure
against the real peers is `--peers`'s ready chat.
"""

from __future__ import annotations

import time

from ..context import Context
from ..table import Row, median
from ..wire import Conn
from . import coldstart
from .throughput import counter, daemon_rate


async def acp_initialize(conn: Conn) -> object:
    return await conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})


async def acp_new_session(conn: Conn) -> object:
    return await conn.request("session/new", {"cwd": "/", "mcpServers": []})


async def peer_rate(ctx: Context, count: int) -> float:
    conn = await ctx.peer()
    try:
        await acp_initialize(conn)
        session = await conn.request("session/new", {"cwd": str(ctx.home), "mcpServers": []})
        seen = counter(conn, "session/update")
        start = time.perf_counter()
        result = await conn.request(
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": str(count)}]},
            timeout=600,
        )
        elapsed = time.perf_counter() - start
    finally:
        await conn.close()
    if result.get("stopReason") != "end_turn" or seen[0] != count:
        raise RuntimeError(f"peer stream: {seen[0]} of {count} updates, {result}")
    return count / elapsed


async def run(ctx: Context) -> list[Row]:
    peer_server = coldstart.Server(ctx.peer, acp_initialize, acp_new_session)
    (daemon_ms, daemon_ready), (peer_ms, peer_ready), runs = await coldstart.side_by_side(
        ctx, coldstart.daemon(ctx), peer_server
    )
    count, rates = ctx.n(100_000, 5_000), ctx.n(3, 1)
    daemon, peer = [], []
    for _ in range(rates):
        daemon.append(await daemon_rate(ctx, count))
        peer.append(await peer_rate(ctx, count))
    ratio = median([d / p for d, p in zip(daemon, peer, strict=True)])
    note = "baseline: ACP SDK agent"
    return [
        Row(
            "peer: cold start",
            daemon_ms,
            "ms",
            peer_ms,
            note=f"median of {runs}; {note} (informative)",
        ),
        Row(
            "peer: cold start to a session",
            daemon_ready,
            "ms",
            peer_ready,
            note=f"→ session/new; median of {runs}; {note}",
        ),
        Row(
            "peer: stream throughput",
            median(daemon),
            "ev/s",
            median(peer),
            ratio=ratio,
            target="faster than the peer (> 1×)",
            ok=ratio > 1,
            note=f"{count:,} deltas, medians of {rates} pairs; {note}",
        ),
    ]
