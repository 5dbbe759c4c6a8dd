"""The summary a compaction puts in place of the history (compaction.py says when).

- `cached_summary`: the conversation's own request (system prompt, tools, messages with
  their notes) with the tool choice `none` (ports.TOOL_CHOICE) and COMPACT_PROMPT as the
  last user message: the provider reads its cached prefix and processes only the tail.
- `summarise`: the fallback, in pieces of the history written out as text, oldest first,
  each summarised with the summary so far; a refused piece is halved.
- `answer`: one request's text; a tool call in it is ignored, never run nor shown.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from ..conversation import Message, text_of
from ..ports import TOOL_CHOICE

if TYPE_CHECKING:
    from ..agent import Agent
    from ..io import Output
    from ..ports import Provider

log = logging.getLogger(__name__)

COMPACT_PROMPT = "Summarize: accomplishments, state, next steps. Brief."
SUMMARY_SYSTEM = "You summarise a conversation between a user and a coding agent."
CHARS_PER_TOKEN = 4
PIECE_SHARE = 0.5  # of the window: the conversation text one summary request carries
SUMMARY_SHARE = 0.2  # of the window: the most of the summary so far a piece carries
MAX_PIECES = 64  # a longer history keeps its newest pieces; the oldest are said dropped
MAX_SPLITS = 4  # a refused piece is halved at most this many times
SUMMARY_ROOM = 0.08  # of the window: the room the cached summary needs after its request
ROOM_TOKENS = 2048  # ... and at most this many tokens


async def cached_summary(
    agent: Agent, scratch: Sequence[Message], window: int | None, shown: bool
) -> str | None:
    """The summary from the conversation's own request with COMPACT_PROMPT at its end,
    under tool choice `none` (the module's doc); None when the room left in the window
    is too small for it, or it failed (the caller makes it in pieces then)."""
    from .compaction import size  # the one measure of a request (compaction.py)

    tools = agent.toolbox.definitions(agent.tool_filter)
    ask: Message = {"role": "user", "content": COMPACT_PROMPT}
    messages = [*agent.transcript.messages(scratch), ask]
    if window:
        room = min(int(window * SUMMARY_ROOM), ROOM_TOKENS)
        if agent.gauge.estimate(size(messages, tools)) + room > window:
            return None
    token = TOOL_CHOICE.set("none")
    try:
        output = agent.output if shown else None
        return await answer(
            agent.provider, messages, tools, output, cut_ok=not shown, spent=agent.spent
        )
    except Exception as exc:
        if not getattr(exc, "data", {}).get("context_overflow") and shown:
            raise  # /compact says the provider's error as it is
        log.info("compaction: the cached summary failed (%s); in pieces", exc)
        return None
    finally:
        TOOL_CHOICE.reset(token)


async def summarise(provider: Provider, messages: Sequence[Message], window: int | None) -> str:
    """The summary of `messages`, made in pieces oldest first (see the module's doc)."""
    text = "\n\n".join(f"{m['role']}: {text_of(m.get('content'))}" for m in messages)
    budget = int(window * PIECE_SHARE * CHARS_PER_TOKEN) if window else len(text) + 1
    pieces = [text[i : i + budget] for i in range(0, len(text), max(budget, 1))] or [""]
    summary = ""
    if len(pieces) > MAX_PIECES:
        dropped = len(pieces) - MAX_PIECES
        pieces = pieces[dropped:]
        summary = f"(the oldest {dropped * budget} characters of the conversation were dropped)"
    for piece in pieces:
        summary = await _piece(provider, summary, piece, window, MAX_SPLITS)
    return summary


async def _piece(
    provider: Provider, summary: str, piece: str, window: int | None, splits: int
) -> str:
    """The summary so far, with `piece` summarised into it; a refused piece is halved."""
    if window:
        summary = summary[: int(window * SUMMARY_SHARE * CHARS_PER_TOKEN)]
    ask = (f"The summary so far:\n\n{summary}\n\n" if summary else "") + (
        f"The conversation{' (continued)' if summary else ''}:\n\n{piece}\n\n{COMPACT_PROMPT}"
    )
    messages: list[Message] = [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": ask},
    ]
    try:
        return await answer(provider, messages)
    except Exception as exc:
        if not getattr(exc, "data", {}).get("context_overflow") or splits <= 0 or len(piece) < 2:
            raise
    half = len(piece) // 2
    summary = await _piece(provider, summary, piece[:half], window, splits - 1)
    return await _piece(provider, summary, piece[half:], window, splits - 1)


async def answer(
    provider: Provider,
    messages: list[Message],
    tools: Sequence[dict[str, Any]] = (),
    output: Output | None = None,
    cut_ok: bool = False,
    spent: dict[str, int] | None = None,
) -> str:
    """The text of one request; a tool call it returns is ignored (never run, never
    shown). Its text and thinking are streamed to `output` when given. An empty one is
    a failure, and so is one cut off by the token limit unless `cut_ok` (it then ends
    `[summary cut]`). Its token counts are added to `spent`."""
    said: list[str] = []
    cut = False
    async with aclosing(provider.fetch(messages, list(tools))) as events:
        async for event in events:
            kind = event.get("type")
            if kind == "saying":
                said.append(str(event.get("text", "")))
                if output is not None:
                    output.saying(said[-1])
            elif kind == "thinking" and output is not None:
                output.thinking(str(event.get("text", "")))
            elif kind == "usage" and spent is not None:
                for key, value in event.items():
                    if key != "type" and isinstance(value, int) and not isinstance(value, bool):
                        spent[key] = spent.get(key, 0) + value
            elif kind == "stop" and event.get("reason") == "max_tokens":
                cut = True
    text = "".join(said).strip()
    if cut and cut_ok and text:
        return f"{text} [summary cut]"
    if cut:
        raise RuntimeError("the summary was cut off by the model's token limit")
    if not text:
        raise RuntimeError("the model sent an empty summary")
    return text
