"""Cold start: spawn `elelem daemon` until its `initialize` response.

Side by side with the bare asyncio echo server (`servers/echo.py`): the runs alternate,
so both sides see the same machine load. Median of the runs, after one warm-up each.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..context import Context, initialize
from ..table import Row, median
from ..wire import Conn

TARGET = 2.5


async def start_ms(
    spawn: Callable[[], Awaitable[Conn]], init: Callable[[Conn], Awaitable[Any]] = initialize
) -> float:
    """Milliseconds from spawning the process to the answer of its first request."""
    start = time.perf_counter()
    conn = await spawn()
    try:
        await init(conn)
        return (time.perf_counter() - start) * 1000
    finally:
        await conn.close()


async def side_by_side(
    ctx: Context,
    spawn: Callable[[], Awaitable[Conn]],
    init: Callable[[Conn], Awaitable[Any]] = initialize,
) -> tuple[float, float, int]:
    """Median start of the daemon and of another server, alternating; and the run count."""
    runs = ctx.n(15, 3)
    await start_ms(ctx.daemon)
    await start_ms(spawn, init)
    daemon, other = [], []
    for _ in range(runs):
        daemon.append(await start_ms(ctx.daemon))
        other.append(await start_ms(spawn, init))
    return median(daemon), median(other), runs


async def run(ctx: Context) -> list[Row]:
    daemon, bare, runs = await side_by_side(ctx, ctx.echo)
    return [
        Row(
            "cold start (spawn → initialize)",
            daemon,
            "ms",
            bare,
            target=f"≤ {TARGET}× bare server",
            ok=daemon / bare <= TARGET,
            note=f"median of {runs}; baseline: bare asyncio echo server",
        )
    ]
