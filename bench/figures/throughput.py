"""Stream throughput: one turn whose provider streams N `saying` deltas, read by a client.

The daemon runs the stub provider's `!stream N` turn; the baseline is the raw framed
writer (`servers/echo.py`, `bench/stream`), which writes the same `event/saying`
messages with one `write` + `flush` each. Both are read by the same client; the rate
is N over the time from sending the request to its response. The runs alternate in
pairs; the ratio is the median of the pairs' ratios, robust to a burst of load
landing on one side.

An informative row shows the same turn with the render-rate option
(`capabilities.events.coalesceMs`): deltas joined into at most one notification per
16 ms. A daemon without the option sends every delta, and the row says so.
"""

from __future__ import annotations

import time

from ..context import Context, initialize, open_session, settled
from ..table import Row, median
from ..wire import Conn

TARGET = 0.6
COALESCE_MS = 16  # a 60 Hz render rate


def counter(conn: Conn, method: str) -> list[int]:
    seen = [0]

    def count(params: dict) -> None:
        seen[0] += 1

    conn.on_notify[method] = count
    return seen


async def daemon_rate(ctx: Context, count: int) -> float:
    rate, _ = await daemon_stream(ctx, count)
    return rate


async def daemon_stream(ctx: Context, count: int, coalesce_ms: int = 0) -> tuple[float, int]:
    """Deltas per second through the daemon, and how many notifications carried them."""
    conn = await ctx.daemon()
    deltas, notes = [0], [0]

    def on_saying(params: dict) -> None:
        notes[0] += 1
        deltas[0] += params["text"].count("tok")

    try:
        await initialize(conn, **({"events": {"coalesceMs": coalesce_ms}} if coalesce_ms else {}))
        session = await open_session(conn, ctx.home)
        await settled(conn)
        conn.on_notify["event/saying"] = on_saying
        start = time.perf_counter()
        result = await conn.request(
            "session/turn", {"sessionId": session, "text": f"!stream {count}"}, timeout=600
        )
        elapsed = time.perf_counter() - start
    finally:
        await conn.close()
    if result.get("stopReason") != "end_turn" or deltas[0] != count:
        raise RuntimeError(f"daemon stream: {deltas[0]} of {count} deltas, {result}")
    return count / elapsed, notes[0]


async def raw_rate(ctx: Context, count: int) -> float:
    conn = await ctx.echo()
    try:
        await initialize(conn)
        seen = counter(conn, "event/saying")
        start = time.perf_counter()
        await conn.request("bench/stream", {"sessionId": "s", "count": count}, timeout=600)
        elapsed = time.perf_counter() - start
    finally:
        await conn.close()
    if seen[0] != count:
        raise RuntimeError(f"raw writer: {seen[0]} of {count} messages")
    return count / elapsed


async def run(ctx: Context) -> list[Row]:
    count, runs = ctx.n(100_000, 5_000), ctx.n(5, 1)
    daemon, raw = [], []
    for _ in range(runs):  # pairs, alternating: each pair shares the machine's load
        daemon.append(await daemon_rate(ctx, count))
        raw.append(await raw_rate(ctx, count))
    ratio = median([d / r for d, r in zip(daemon, raw, strict=True)])
    coalesced, notes = max([await daemon_stream(ctx, count, COALESCE_MS) for _ in range(runs)])
    return [
        Row(
            "stream throughput",
            median(daemon),
            "ev/s",
            median(raw),
            ratio=ratio,
            target=f"≥ {TARGET}× raw",
            ok=ratio >= TARGET,
            note=f"{count:,} deltas; medians of {runs} pairs, ratio the median pair's; "
            "baseline: raw framed writer",
        ),
        Row(
            f"stream throughput, coalesced to {COALESCE_MS} ms",
            coalesced,
            "ev/s",
            median(raw),
            note=f"capabilities.events.coalesceMs: {count:,} deltas in {notes:,} notification(s)",
        ),
    ]
