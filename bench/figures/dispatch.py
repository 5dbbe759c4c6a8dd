"""Tool dispatch: `Toolbox.run` of a no-op tool with a 5-property schema and two hooks.

Validation, a wildcard before hook and a tool's after hook all run, as for a real
call. Measured for an `async` handler (awaited on the loop) and a plain one (run in a
worker thread, as built-in tools are), in µs per call.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from elelem_daemon.toolbox import Toolbox

from ..context import Context
from ..table import Row, median

TARGET_US = 100.0
PARAMS = {
    "path": {"type": "string", "description": "a file"},
    "line": {"type": "integer", "minimum": 1},
    "force": {"type": "boolean"},
    "ratio": {"type": "number"},
    "tags": {"type": "array", "items": {"type": "string"}},
}
ARGS = {"path": "a.txt", "line": 3, "force": False, "ratio": 0.5, "tags": ["x", "y"]}


def toolbox() -> Toolbox:
    box = Toolbox()

    async def noop(args: dict[str, Any]) -> None:
        return None

    def plain(args: dict[str, Any]) -> None:
        return None

    box.add("noop", "does nothing", PARAMS, ["path", "line"], handler=noop)
    box.add("plain", "does nothing in a thread", PARAMS, ["path", "line"], handler=plain)
    box.before(lambda args, tool_name: None)
    box.after(lambda args, value: None, tool="noop")
    box.after(lambda args, value: None, tool="plain")
    return box


async def per_call_us(box: Toolbox, name: str, calls: int, batches: int) -> float:
    result = await box.run(name, ARGS)
    assert result.ok, result.payload  # the benchmark measures a successful call
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            await box.run(name, ARGS)
        times.append((time.perf_counter() - start) / calls * 1e6)
    return median(times)


async def hop_us(calls: int, batches: int) -> float:
    def nothing(args: dict[str, Any]) -> None:
        return None

    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            await asyncio.to_thread(nothing, ARGS)
        times.append((time.perf_counter() - start) / calls * 1e6)
    return median(times)


async def run(ctx: Context) -> list[Row]:
    box = toolbox()
    calls, batches = ctx.n(2000, 200), ctx.n(7, 3)
    note = f"median of {batches}×{calls} calls"
    direct = await per_call_us(box, "noop", calls, batches)
    threaded, hop = [], []
    for _ in range(batches):  # alternate, so both see the same load
        threaded.append(await per_call_us(box, "plain", calls, 1))
        hop.append(await hop_us(calls, 1))
    plain, bare = median(threaded), median(hop)
    return [
        Row(
            "tool dispatch (async handler)",
            direct,
            "µs",
            target=f"≤ {TARGET_US:.0f} µs",
            ok=direct <= TARGET_US,
            note=note,
        ),
        Row(
            "tool dispatch (plain handler, in a thread)",
            plain,
            "µs",
            bare,
            target=f"≤ {TARGET_US:.0f} µs over the hop",
            ok=plain - bare <= TARGET_US,
            note=f"{note}; baseline: bare asyncio.to_thread",
        ),
    ]
