"""The event loop, watched from a test: `ticking` counts its passes while a block runs.

A count above zero after awaiting some work says the loop kept running meanwhile
(the work was done in a thread, not on the loop)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass
class Ticks:
    count: int = 0


@contextlib.asynccontextmanager
async def ticking() -> AsyncIterator[Ticks]:
    """`async with ticking() as ticks:` ... `ticks.count`: the loop's passes meanwhile."""
    ticks = Ticks()

    async def tick() -> None:
        while True:
            ticks.count += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    try:
        yield ticks
    finally:
        ticker.cancel()
        await asyncio.wait([ticker])  # not `await ticker`: a cancel of the test goes on
