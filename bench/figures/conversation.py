"""Long conversation: building the messages for one fetch with N kept messages.

What the agent does before each provider call: the tool definitions and
`Transcript.request` (system prompt rendered fresh and compared with the last request's,
the tools too, the turn's note taken, the kept messages, this turn's tool traffic).
Measured at 1k, 10k and 100k messages (the best of the repeats, as timeit reports);
linear growth means the 100k time is about 10× the 10k time.
"""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path

from elelem_daemon.conversation import Conversation
from elelem_daemon.toolbox import Toolbox
from elelem_daemon.transcript import SystemPrompt, Transcript

from ..context import Context
from ..table import Row
from .dispatch import toolbox

TARGET_MS = 5.0
TEXT = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 4


def transcript(size: int, cwd: Path) -> Transcript:
    conversation = Conversation()
    for i in range(size):
        conversation.add("user" if i % 2 == 0 else "assistant", f"{i} {TEXT}")
    return Transcript(SystemPrompt(None, cwd), conversation)


def build_ms(size: int, cwd: Path, box: Toolbox, repeats: int) -> float:
    kept = transcript(size, cwd)
    scratch = [{"role": "tool", "tool_call_id": "1", "name": "read", "content": "{}"}]
    times = []
    gc.disable()  # as timeit does: a collection is not the build's cost
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            kept.request(scratch, box.definitions())
            times.append((time.perf_counter() - start) * 1000)
    finally:
        gc.enable()
    return min(times)


def wire_ms(size: int, cwd: Path, box: Toolbox, repeats: int) -> float | None:
    """The `openai` provider's request for the same fetch, JSON-encoded as httpx sends it."""
    try:
        from elelem_daemon.providers.openai import OpenAIProvider
    except ImportError:  # the real providers are not in this build (issue 4)
        return None
    provider = OpenAIProvider("bench", base_url="http://127.0.0.1:9/v1", api_key="bench")
    messages, tools = transcript(size, cwd).messages(), box.definitions()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        _, _, body = provider.request(messages, tools)
        json.dumps(body).encode()
        times.append((time.perf_counter() - start) * 1000)
    return min(times)


async def run(ctx: Context) -> list[Row]:
    box = toolbox()
    sizes = (1_000, 10_000, 100_000)
    repeats = ctx.n(31, 11)
    ms = {size: build_ms(size, ctx.home, box, repeats) for size in sizes}
    small, mid, big = sizes
    growth = (ms[big] / ms[mid]) / (big / mid)
    rows = [Row(f"messages for a fetch, {size:,} kept", ms[size], "ms") for size in sizes]
    rows[1].target, rows[1].ok = f"≤ {TARGET_MS:g} ms", ms[mid] <= TARGET_MS
    rows.append(
        Row(
            "growth 10k→100k, per message",
            growth,
            "",
            target="linear (≤ 1.5)",
            ok=growth <= 1.5,
            note=f"1k→10k: {(ms[mid] / ms[small]) / (mid / small):.2f}; 1.00 is linear",
        )
    )
    wire = wire_ms(10_000, ctx.home, box, repeats)
    rows.append(
        Row(
            "openai request body, 10,000 kept",
            wire,
            "ms",
            note="provider.request + JSON, as sent (informative)"
            if wire is not None
            else "not measured: no `openai` provider in this build (issue 4)",
        )
    )
    return rows
