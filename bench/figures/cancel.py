"""Cancel latency: from `session/cancel` to the turn's response.

Two cases, each repeated in one session: while the stub streams (`!stream` with 1 ms
between deltas, a fast model), cancelled after a few deltas; and while a tool runs
`sleep 30`, cancelled once `event/doing` arrived. The baseline is one request round
trip to the bare echo server, the floor for any "send, then read an answer".
"""

from __future__ import annotations

import asyncio
import time

from ..context import Context, initialize, open_session, settled
from ..table import Row, median, percentile
from ..wire import Conn

TARGET_MS = 100.0
STREAM = "!stream 1000000 1"
TOOL = '!tool execute {"command":"sleep 30"}'


async def cancel_ms(conn: Conn, session: str, text: str, signal: str, after: int) -> float:
    """Start a turn, wait for `after` `signal` events, cancel; ms until the response."""
    seen = [0]
    ready = asyncio.Event()

    def on(params: dict) -> None:
        seen[0] += 1
        if seen[0] >= after:
            ready.set()

    conn.on_notify[signal] = on
    _, turn = conn.start("session/turn", {"sessionId": session, "text": text})
    await asyncio.wait_for(ready.wait(), 30)
    if signal == "event/doing":
        await asyncio.sleep(0.05)  # the tool's process is running by now
    start = time.perf_counter()
    conn.notify("session/cancel", {"sessionId": session})
    result = await asyncio.wait_for(turn, 30)
    elapsed = (time.perf_counter() - start) * 1000
    del conn.on_notify[signal]
    if result.get("stopReason") != "cancelled":
        raise RuntimeError(f"cancel: the turn answered {result}")
    return elapsed


async def round_trip_ms(ctx: Context, runs: int) -> float:
    conn = await ctx.echo()
    try:
        await initialize(conn)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            await conn.request("ping", {})
            times.append((time.perf_counter() - start) * 1000)
        return median(times)
    finally:
        await conn.close()


async def run(ctx: Context) -> list[Row]:
    runs_stream, runs_tool = ctx.n(30, 3), ctx.n(10, 2)
    floor = await round_trip_ms(ctx, 50)
    conn = await ctx.daemon()
    try:
        await initialize(conn)
        session = await open_session(conn, ctx.home)
        await settled(conn)
        streaming = [
            await cancel_ms(conn, session, STREAM, "event/saying", 20) for _ in range(runs_stream)
        ]
        tool = [await cancel_ms(conn, session, TOOL, "event/doing", 1) for _ in range(runs_tool)]
    finally:
        await conn.close()
    rows = []
    for label, times in (("while streaming", streaming), ("while a tool runs", tool)):
        p99 = percentile(times, 99)
        rows.append(
            Row(
                f"cancel latency {label}, p99",
                p99,
                "ms",
                floor,
                target=f"p99 ≤ {TARGET_MS:g} ms",
                ok=p99 <= TARGET_MS,
                note=f"median {median(times):.1f} ms of {len(times)}; baseline: echo round trip",
            )
        )
    return rows
