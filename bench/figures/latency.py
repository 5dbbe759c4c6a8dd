"""Token latency: from an SSE chunk leaving a local OpenAI-format server to the client
reading the matching `event/saying`.

The server (`servers/sse.py`, its own process) stamps each chunk just before writing
it; the client stamps each notification when its bytes were read from the daemon's
stdout. Both clocks are CLOCK_MONOTONIC. The chunks are 2 ms apart, so the figure is
the daemon's added latency (HTTP read, SSE parse, agent, notify), not queueing.

The baseline is `servers/relay.py`, a bare standard-library relay reading the same
stream from the same server and writing the same notifications, alternating with the
daemon: the floor this machine, at this load, sets.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from ..context import SERVERS, Context, initialize, open_session
from ..table import Row, percentile
from ..wire import Conn, RpcError

P50_MS, P99_MS = 1.0, 5.0
GAP_MS = 2


async def spawn_sse(ctx: Context) -> tuple[asyncio.subprocess.Process, int]:
    proc = await asyncio.create_subprocess_exec(
        ctx.python, str(SERVERS / "sse.py"), stdout=asyncio.subprocess.PIPE, stderr=sys.stderr
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 10)
    if not line.strip():
        raise RuntimeError("the SSE server did not start")
    return proc, int(line)


@dataclass
class Pair:
    """The openai path and its baseline, side by side (this figure's and provider.py's)."""

    conn: Conn  # the daemon, its openai provider pointed at the server
    session: str | None  # None: this build has no `openai` provider
    relay: Conn  # servers/relay.py
    port: int  # servers/sse.py's


@asynccontextmanager
async def openai_pair(ctx: Context) -> AsyncIterator[Pair]:
    """Start the SSE server, the relay and the daemon with an `openai` session; stop them."""
    server, port = await spawn_sse(ctx)
    relay = await Conn.spawn([ctx.python, str(SERVERS / "relay.py")], env=ctx.env())
    conn = await ctx.daemon(
        OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="bench", OPENAI_MODEL="bench"
    )
    try:
        await initialize(conn)
        try:
            session: str | None = await open_session(conn, ctx.home, provider="openai")
        except RpcError as exc:
            if exc.kind != "unknown_provider":
                raise
            session = None
        yield Pair(conn, session, relay, port)
    finally:
        await conn.close()
        await relay.close()
        server.terminate()
        await server.wait()


async def get_stamps(port: int) -> list[float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /stamps HTTP/1.1\r\nHost: bench\r\nContent-Length: 0\r\n\r\n")
    await writer.drain()
    response = await reader.read()
    writer.close()
    return json.loads(response.partition(b"\r\n\r\n")[2])


def collector(conn: Conn) -> dict[int, float]:
    """Read times of each `cN` token in `event/saying` notifications, by N."""
    received: dict[int, float] = {}

    def on_saying(params: dict) -> None:
        for token in params["text"].split():
            if token.startswith("c") and token[1:].isdigit():
                received[int(token[1:])] = conn.stamp

    conn.on_notify["event/saying"] = on_saying
    return received


async def lags(received: dict[int, float], port: int, count: int) -> list[float]:
    sent = await get_stamps(port)
    if len(received) != count or len(sent) != count:
        raise RuntimeError(f"token latency: {len(received)} of {count} chunks arrived")
    return [(received[i] - sent[i]) * 1000 for i in range(count)]


async def daemon_round(conn: Conn, session: str, port: int, count: int) -> list[float]:
    received = collector(conn)
    result = await conn.request("session/turn", {"sessionId": session, "text": f"{count} {GAP_MS}"})
    if result.get("stopReason") != "end_turn":
        raise RuntimeError(f"openai turn: {result}")
    return await lags(received, port, count)


async def relay_round(relay: Conn, port: int, count: int) -> list[float]:
    received = collector(relay)
    await relay.request("bench/relay", {"port": port, "count": count, "gap": GAP_MS})
    return await lags(received, port, count)


async def run(ctx: Context) -> list[Row]:
    count, rounds = ctx.n(1000, 100), ctx.n(5, 1)
    target = f"p50 ≤ {P50_MS:g} ms, p99 ≤ {P99_MS:g} ms"
    async with openai_pair(ctx) as pair:
        if pair.session is None:
            return [Row("token latency", None, target=target, note="no `openai` provider")]
        await daemon_round(pair.conn, pair.session, pair.port, 20)  # warm-up: the pool
        await relay_round(pair.relay, pair.port, 20)
        ours: list[float] = []
        floor: list[float] = []
        for _ in range(rounds):  # alternate, so both see the same load
            ours += await daemon_round(pair.conn, pair.session, pair.port, count // rounds)
            floor += await relay_round(pair.relay, pair.port, count // rounds)
    note = f"{len(ours):,} chunks {GAP_MS} ms apart, openai provider; baseline: bare relay"
    rows = []
    for name, p, limit in (("p50", 50, P50_MS), ("p99", 99, P99_MS)):
        value = percentile(ours, p)
        rows.append(
            Row(
                f"token latency {name}",
                value,
                "ms",
                percentile(floor, p),
                target=f"≤ {limit:g} ms",
                ok=value <= limit,
                note=note if p == 50 else "",
            )
        )
    return rows
