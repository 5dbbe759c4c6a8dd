"""NDJSON lines: the ACP face's splitter (`jsonrpc.lines.lines`) on one long line.

One line of 8 and 32 MiB fed in 64 KiB chunks, as stdin gives it, with the limit
above it (the line is kept and handed on) and below it (a 48 MiB line refused:
its bytes are counted and dropped as they come). Linear means the time grows as the
baseline's does (the splitter it replaced searched its whole buffer again on every
chunk: 48 MiB took 41 s). Baseline: the bytes joined once and split once, the least
any splitter can do; target: within 2× of it at 32 MiB.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from elelem_daemon.jsonrpc.lines import TooLong, lines

from ..context import Context
from ..table import Row, median

CHUNK = 65536
MIB = 1024 * 1024


def feeder(size: int) -> Callable[[], Awaitable[bytes]]:
    chunk = b"y" * CHUNK
    full, rest = divmod(size, CHUNK)
    pieces = [chunk] * full + ([chunk[:rest]] if rest else []) + [b"\n"]
    pieces.reverse()

    async def read() -> bytes:
        return pieces.pop() if pieces else b""

    return read


async def split_ms(size: int, limit: int) -> tuple[float, object]:
    read = feeder(size)
    start = time.perf_counter()
    out = [line async for line in lines(read, limit)]
    return (time.perf_counter() - start) * 1000, out[0]


def baseline_ms(size: int) -> float:
    chunks = [b"y" * CHUNK] * (size // CHUNK) + [b"\n"]
    start = time.perf_counter()
    b"".join(chunks).split(b"\n")
    return (time.perf_counter() - start) * 1000


async def run(ctx: Context) -> list[Row]:
    repeats = ctx.n(5, 2)
    rows = []
    kept = {}
    for size in (8 * MIB, 32 * MIB):
        times = []
        for _ in range(repeats):
            ms, line = await split_ms(size, 64 * MIB)
            assert isinstance(line, bytes) and len(line) == size
            times.append(ms)
        kept[size] = median(times)
        base = median([baseline_ms(size) for _ in range(repeats)])
        rows.append(
            Row(
                f"ACP line of {size // MIB} MiB, kept", kept[size], "ms", base, note="64 KiB chunks"
            )
        )
    rows[-1].target, rows[-1].ok = (
        "≤ 2× baseline",
        rows[-1].ratio is not None and rows[-1].ratio <= 2,
    )
    refused = []
    for _ in range(repeats):
        ms, line = await split_ms(48 * MIB, 32 * MIB)
        assert isinstance(line, TooLong) and line.size == 48 * MIB
        refused.append(ms)
    rows.append(Row("ACP line of 48 MiB over a 32 MiB limit, refused", median(refused), "ms"))
    return rows
