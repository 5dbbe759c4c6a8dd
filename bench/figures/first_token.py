"""Time to first token: from the client's request to the first `event/saying` it reads,
through the daemon and its `openai` provider, against the same request made directly.

The server (`servers/sse.py`) holds the first chunk `FIRST_MS` (100 ms: what a local
llama.cpp model took to read a short prompt, issue 30), then sends a few chunks. The
baseline is `servers/relay.py` (a standard-library relay that posts the same request to
the same server and writes the same notification for the first chunk): a direct request,
with nothing of ours in the way. The rounds alternate; the ratio is the median of the
pairs' ratios. What the daemon adds is its turn's start (the session, the request's
body, httpx's connection) and the way back (SSE, JSON, the agent, the frame).
"""

from __future__ import annotations

import time

from ..context import Context
from ..table import Row, median
from ..wire import Conn
from .latency import openai_pair

TARGET = 1.05
FIRST_MS = 100
CHUNKS = 5


async def first_ms(conn: Conn, method: str, params: dict, timeout: float = 60) -> float:
    """Milliseconds from sending the request to reading the first `event/saying`."""
    seen: list[float] = []
    conn.on_notify["event/saying"] = lambda _params: seen.append(conn.stamp)
    start = time.perf_counter()
    result = await conn.request(method, params, timeout=timeout)
    stop = result.get("stopReason", "end_turn") if isinstance(result, dict) else "end_turn"
    if not seen or stop != "end_turn":
        raise RuntimeError(f"time to first token: {len(seen)} notifications, {result}")
    return (seen[0] - start) * 1000


async def run(ctx: Context) -> list[Row]:
    rounds = ctx.n(15, 3)
    target = f"≤ {TARGET:g}× direct"
    async with openai_pair(ctx) as pair:
        if pair.session is None:
            return [Row("time to first token", None, target=target, note="no `openai` provider")]
        turn = {"sessionId": pair.session, "text": f"{CHUNKS} 0 {FIRST_MS}"}
        direct = {"port": pair.port, "count": CHUNKS, "gap": 0, "first": FIRST_MS}
        await first_ms(pair.conn, "session/turn", turn)  # warm-up: the first turn's imports
        await first_ms(pair.relay, "bench/relay", direct)
        ours, floor = [], []
        for _ in range(rounds):
            ours.append(await first_ms(pair.conn, "session/turn", turn))
            floor.append(await first_ms(pair.relay, "bench/relay", direct))
    ratio = median([a / b for a, b in zip(ours, floor, strict=True)])
    return [
        Row(
            "time to first token (openai provider)",
            median(ours),
            "ms",
            median(floor),
            ratio=ratio,
            target=target,
            ok=ratio <= TARGET,
            note=f"request → first event/saying; medians of {rounds} pairs, ratio the median "
            f"pair's; the server holds the first chunk {FIRST_MS} ms; baseline: the same "
            "request, direct (bare relay)",
        )
    ]
