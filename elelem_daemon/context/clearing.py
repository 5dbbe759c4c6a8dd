"""Clearing: old tool results inside a long turn become one-line stubs.

A turn's tool traffic (`scratch`, agent.py) lives until the turn ends; a long turn of
many reads fills the window with results the model has already used. When a request
after a tool round would pass ELELEM_COMPACT_AT (compaction.during_turn), every tool
result but the newest round's is replaced, in one batch, by a stub naming the call:

    [cleared: read src/a.py — call read again if needed]

So the request's prefix changes once (at the first result cleared: what follows is
re-processed once, and that cost is in the provider's counts like any other), the
newest results stay whole, and the model can ask again for what it still needs. A
result cleared already, or one already as short as its stub, is left as it is.
"""

from __future__ import annotations

from typing import Any

from ..conversation import Message
from .keepsakes import subject

STUB = "[cleared: {call} — call {name} again if needed]"


def clear(scratch: list[Message]) -> int:
    """Clear every tool result in `scratch` before the newest round's (the module's
    doc), in place; how many were cleared."""
    rounds = [
        n for n, m in enumerate(scratch) if m.get("role") == "assistant" and m.get("tool_calls")
    ]
    if len(rounds) < 2:
        return 0  # one round: nothing older to clear
    calls: dict[str, dict[str, Any]] = {}
    for message in scratch[: rounds[-1]]:
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                calls[str(call.get("id"))] = call
    cleared = 0
    for n in range(rounds[-1]):
        message = scratch[n]
        if message.get("role") != "tool":
            continue
        call = calls.get(str(message.get("tool_call_id")), {})
        name = str(call.get("name") or message.get("name") or "the tool")
        found = call.get("arguments")
        arguments: dict[str, Any] = found if isinstance(found, dict) else {}
        stub = STUB.format(call=subject(name, arguments), name=name)
        content = message.get("content")
        if (
            not isinstance(content, str)
            or len(content) <= len(stub)
            or content.startswith("[cleared: ")
        ):
            continue
        scratch[n] = {**message, "content": stub}
        cleared += 1
    return cleared
