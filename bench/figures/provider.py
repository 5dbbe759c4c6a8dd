"""Provider path: N chunks from a local OpenAI-format SSE server (`servers/sse.py`, no
gap between chunks) through the `openai` provider and the daemon, as `event/saying`
notifications the client counts; chunks per second from the `session/turn` request to
its response.

The setup is latency.py's (`openai_pair`). The baseline is `servers/relay.py`: a
standard-library relay that reads the same stream from the same server, parses the
same SSE and writes the same frames. The rounds
alternate, so both see the same load; the ratio is the median of the pairs' ratios.
The server's own pace bounds both sides alike.

A second row, informative, is the CPU time each side's process spent per chunk
(user + system, from /proc, over the same rounds): the work the daemon does for a
chunk, which the machine's load stretches far less than it stretches the rates.
"""

from __future__ import annotations

import os
import time

from ..context import Context
from ..table import Row, median
from ..wire import Conn
from .latency import collector, openai_pair

TARGET = 0.8
TICK = os.sysconf("SC_CLK_TCK")


def cpu(conn: Conn) -> float:
    """Seconds of CPU (user + system) the process has used, from /proc/PID/stat."""
    with open(f"/proc/{conn.proc.pid}/stat", encoding="ascii") as file:
        fields = file.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK


async def daemon_rate(conn: Conn, session: str, count: int) -> float:
    received = collector(conn)
    start = time.perf_counter()
    result = await conn.request(
        "session/turn", {"sessionId": session, "text": f"{count} 0"}, timeout=600
    )
    elapsed = time.perf_counter() - start
    if result.get("stopReason") != "end_turn" or len(received) != count:
        raise RuntimeError(f"provider path: {len(received)} of {count} chunks, {result}")
    return count / elapsed


async def relay_rate(relay: Conn, port: int, count: int) -> float:
    received = collector(relay)
    start = time.perf_counter()
    await relay.request("bench/relay", {"port": port, "count": count, "gap": 0}, timeout=600)
    elapsed = time.perf_counter() - start
    if len(received) != count:
        raise RuntimeError(f"relay: {len(received)} of {count} chunks")
    return count / elapsed


async def run(ctx: Context) -> list[Row]:
    count, rounds = ctx.n(20_000, 2_000), ctx.n(5, 1)
    target = f"≥ {TARGET:g}× relay"
    async with openai_pair(ctx) as pair:
        if pair.session is None:
            return [Row("provider path", None, target=target, note="no `openai` provider")]
        await daemon_rate(pair.conn, pair.session, 200)  # warm-up: the pool, the imports
        await relay_rate(pair.relay, pair.port, 200)
        ours, floor, spent = [], [], [0.0, 0.0]
        for _ in range(rounds):
            before = cpu(pair.conn)
            ours.append(await daemon_rate(pair.conn, pair.session, count))
            spent[0] += cpu(pair.conn) - before
            before = cpu(pair.relay)
            floor.append(await relay_rate(pair.relay, pair.port, count))
            spent[1] += cpu(pair.relay) - before
    per_chunk = [seconds / (rounds * count) * 1e6 for seconds in spent]
    ratio = median([a / b for a, b in zip(ours, floor, strict=True)])
    return [
        Row(
            "provider path (openai SSE → event/saying)",
            median(ours),
            "ch/s",
            median(floor),
            target=target,
            ok=ratio >= TARGET,
            ratio=ratio,
            note=f"{count:,} chunks, no gap; medians of {rounds} pairs; baseline: bare relay",
        ),
        Row(
            "provider path, CPU per chunk",
            per_chunk[0],
            "µs",
            per_chunk[1],
            note="the daemon's process against the relay's, user + system (informative)",
        ),
    ]
