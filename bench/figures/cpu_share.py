"""CPU per streamed event, as a share of one core, at the paces models stream at.

`servers/sse.py` streams chunks `1000 / RATE` ms apart (50/s: a local model; 200/s: a
fast hosted one; 1,000/s: a burst) through the `openai` provider and the daemon. The
daemon process's CPU time (user + system, all threads, `/proc/PID/stat`) over the
rounds, per event, times RATE is the share of one core it takes at that pace. The
baseline is `servers/relay.py` at the same pace from the same server (no agent, no HTTP
library, no pygls): the floor this machine sets for "chunk in, frame out". Under load
the server's sleeps run late, so the pace it reaches is a little under the asked one
(the note gives it); the cost of an event hardly depends on that.

Targets (issue 30): a streamed answer leaves the editor nearly all of a core: ≤ 3 % at
50/s, ≤ 10 % at 200/s (≤ 7 % since issue 37); 1,000/s is informative.
"""

from __future__ import annotations

import time

from ..context import Context
from ..table import Row
from ..wire import Conn
from .latency import collector, openai_pair
from .provider import cpu

RATES = (50, 200, 1000)  # events per second
TARGETS = {50: 3.0, 200: 7.0}  # % of one core (issue 37: 7 at 200/s); 1,000/s informative


async def paced(conn: Conn, method: str, params: dict, count: int) -> tuple[float, float]:
    """(CPU seconds of the process, wall seconds) for one paced stream of `count` events."""
    received = collector(conn)
    before, start = cpu(conn), time.perf_counter()
    result = await conn.request(method, params, timeout=600)
    wall, spent = time.perf_counter() - start, cpu(conn) - before
    if len(received) != count or (isinstance(result, dict) and "stopReason" in result
                                  and result["stopReason"] != "end_turn"):  # fmt: skip
        raise RuntimeError(f"cpu share: {len(received)} of {count} events, {result}")
    return spent, wall


async def run(ctx: Context) -> list[Row]:
    seconds, rounds = ctx.n(4, 1), ctx.n(3, 1)
    rows: list[Row] = []
    async with openai_pair(ctx) as pair:
        if pair.session is None:
            return [Row("CPU per streamed event", None, note="no `openai` provider")]
        for rate in RATES:
            count, gap = rate * seconds, 1000 / rate
            turn = {"sessionId": pair.session, "text": f"{count} {gap:g}"}
            direct = {"port": pair.port, "count": count, "gap": gap}
            ours, floor = [0.0, 0.0], [0.0, 0.0]
            for _ in range(rounds):  # alternate, so both see the same load
                for total, (conn, method, params) in (
                    (ours, (pair.conn, "session/turn", turn)),
                    (floor, (pair.relay, "bench/relay", direct)),
                ):
                    spent, wall = await paced(conn, method, params, count)
                    total[0] += spent
                    total[1] += wall
            events = count * rounds
            each, base_each = ours[0] / events, floor[0] / events  # CPU seconds per event
            share, base = 100 * each * rate, 100 * base_each * rate
            limit = TARGETS.get(rate)
            rows.append(
                Row(
                    f"CPU per streamed event at {rate:,}/s, share of a core",
                    share,
                    "%",
                    base,
                    target=f"≤ {limit:g} %" if limit else "",
                    ok=share <= limit if limit else None,
                    note=f"{each * 1e6:,.0f} µs per event (relay {base_each * 1e6:,.0f}); "
                    f"{events:,} events, {events / ours[1]:,.0f}/s reached; baseline: bare relay",
                )
            )
    return rows
