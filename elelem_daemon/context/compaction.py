"""Compaction: the model's context window is managed, not hit.

- **Before a turn** (`before_turn`), when the request it would send (the system
  prompt, the tools, the kept history and the new prompt) is estimated past
  `ELELEM_COMPACT_AT` of the window (default 0.85; 0 turns it off, and so does a
  session's `agent.auto_compact` switch: ACP's `auto_compact` option), the history is
  replaced by its summary, as `/compact` does, and the turn goes on. So too before a
  request after a tool round (`during_turn`, once per turn): the history before the
  turn's prompt is summarised, the round's tool traffic kept. The estimate is
  the provider's own count for the last request (`Gauge`), plus a quarter token per
  character added since; with no count yet, a quarter token per character.
- **A request the server refuses for size** (`context_overflow`, providers/http.py)
  keeps no trace: the agent compacts the history before the turn's prompt and sends
  the request again, once (`ELELEM_COMPACT_RETRY=0` turns the retry off). When that
  cannot help, the prompt is not kept and the user is told how to recover.
- **The summary reads the cached prefix** (`cached_summary`): the request is the
  conversation's own (the same system prompt, tools and messages, its notes included:
  transcript.py), with the tool choice `none` (ports.TOOL_CHOICE) and COMPACT_PROMPT
  appended as the last user message, so the provider re-processes only the new tail.
  A tool call it returns anyway is ignored: never run, never shown. Used whenever the
  request and the summary's room (SUMMARY_ROOM of the window, at most ROOM_TOKENS)
  fit in the window, or the window is unknown.
- **Else the summary is made in pieces** (`summarise`, the fallback: when the room
  left is too small, after a request refused for size, or when the cached summary
  failed): the history is written out as text, oldest first, in pieces of at most
  `PIECE_SHARE` of the window, each summarised with the summary so far; a piece the
  server still refuses is halved (`MAX_SPLITS` times). So `/compact` works on a
  history that already overflows.
- **What survives word for word** (keepsakes.py) follows the summary: the user's own
  words, the plan, the files changed and their state, the last error.
- **Old tool results are cleared inside a long turn** (clearing.py) before any summary:
  when a request after a tool round would pass ELELEM_COMPACT_AT, every tool result but
  the newest round's becomes a one-line stub, in one batch; only if that is not enough
  is the history compacted.
- **One tool result** takes at most `ELELEM_TOOL_SHARE` of the window (default 0.25;
  0 turns it off), cut with a note the model reads (budget.py does the cutting).

Each compaction is announced on the session's Output as an `info` line starting with
`context compacted`, which every face shows (the terminal's info line, the daemon's
`event/say`, an ACP message chunk). The window is the provider's `context_window()`
(providers/window.py), looked up once per provider and bounded: a turn waits for it
only the first time its request (or a tool result) is estimated at LOOKUP_FROM tokens
or more, so a small session sends no metadata request. With no window known, nothing
is compacted ahead of time or cut, and a refused request is still compacted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..base.config import number
from ..conversation import Content, Conversation, Message, images_in, text_of
from .summary import cached_summary, summarise

if TYPE_CHECKING:
    from ..agent import Agent
    from ..ports import Provider

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1600  # what an image is counted as
SUMMARY_SHARE = 0.2  # of the window: the most a summary may take
SUMMARY_PREFIX = "Context: "  # the kept summary's first words
LOOKUP_FROM = 1500  # tokens: a request (or tool result) this large asks the window first


def share(name: str, default: float) -> float:
    """A share of the window from the environment: 0 to 1, or a percentage (`85`)."""
    value = number(name, default)
    return value / 100 if 1 < value <= 100 else min(value, 1.0)


def compact_at() -> float:
    """`ELELEM_COMPACT_AT`: the share of the window past which a turn compacts first."""
    return share("ELELEM_COMPACT_AT", 0.85)


def retry_on() -> bool:
    """`ELELEM_COMPACT_RETRY`: whether a request refused for size is compacted and sent again."""
    return number("ELELEM_COMPACT_RETRY", 1) > 0


def tool_share() -> float:
    """`ELELEM_TOOL_SHARE`: the share of the window one tool result may take."""
    return share("ELELEM_TOOL_SHARE", 0.25)


def size(messages: Iterable[Message], tools: Sequence[dict[str, Any]] = ()) -> int:
    """The characters a request carries: each message's text (an image as
    IMAGE_TOKENS' worth), its tool calls, and the tool definitions."""
    total = sum(len(repr(tool)) for tool in tools)
    for message in messages:
        content = message.get("content")
        total += len(text_of(content)) + 16
        total += len(images_in(content)) * IMAGE_TOKENS * CHARS_PER_TOKEN
        if calls := message.get("tool_calls"):
            total += len(repr(calls))
    return total


class Gauge:
    """How many tokens a request holds: the provider's count for the last one it
    answered (`measure`), plus what was added since at CHARS_PER_TOKEN."""

    def __init__(self) -> None:
        self.tokens = 0  # the provider's count for the last request, with its reply
        self.chars = 0  # what that request and its reply held, in characters

    def measure(self, chars: int, tokens: int | None) -> None:
        if tokens is not None and tokens > 0 and chars > 0:
            self.tokens, self.chars = tokens, chars

    def estimate(self, chars: int) -> int:
        if not self.tokens:
            return chars // CHARS_PER_TOKEN
        if chars >= self.chars:
            return self.tokens + (chars - self.chars) // CHARS_PER_TOKEN
        return chars * self.tokens // self.chars  # the history shrank: the same ratio


async def window_of(provider: Provider) -> int | None:
    """The provider's context window, waiting for its lookup (bounded: providers/
    window.py); for a command such as /compact, never on a turn's path."""
    lookup = getattr(provider, "context_window", None)
    if not callable(lookup):
        return None
    try:
        value = await lookup()
    except Exception as exc:
        log.info("context window: %s", exc)
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


async def tool_limit(provider: Provider, chars: int) -> int | None:
    """The characters one tool result may take (ELELEM_TOOL_SHARE), asked for a result
    of `chars`; None when unbounded (or too small to need the window)."""
    share = tool_share()
    if share <= 0 or chars < LOOKUP_FROM * CHARS_PER_TOKEN:
        return None
    window = await window_of(provider)
    return max(int(window * share * CHARS_PER_TOKEN), 256) if window else None


def request_chars(agent: Agent, extra: Iterable[Message] = ()) -> int:
    """What the agent's next request would carry, with `extra` after the history."""
    tools = agent.toolbox.definitions(agent.tool_filter)
    return size([*agent.transcript.messages(), *extra], tools)


async def before_turn(agent: Agent, prompt: Content) -> None:
    """Compact first when the turn's request would pass ELELEM_COMPACT_AT of the window.
    Never fails the turn: a compaction that fails is said, and the turn goes on."""
    at = compact_at()
    if at <= 0 or not agent.auto_compact or len(agent.conversation) < 2:
        return
    estimate = agent.gauge.estimate(request_chars(agent, [{"role": "user", "content": prompt}]))
    if estimate < LOOKUP_FROM:
        return
    window = await window_of(agent.provider)
    if not window or estimate <= at * window:
        return
    reason = f"~{estimate} of {window} tokens, past {at:.0%} (ELELEM_COMPACT_AT)"
    await compact(agent, reason)


async def during_turn(agent: Agent, scratch: list[Message]) -> bool:
    """Within a turn, before a request after a tool round that would pass
    ELELEM_COMPACT_AT of the window: first clear the old tool results in `scratch`
    (clearing.py, one batch); if the request still passes, compact the history before
    the prompt. Whether it compacted."""
    at = compact_at()
    if at <= 0 or not agent.auto_compact:
        return False
    estimate = agent.gauge.estimate(request_chars(agent, scratch))
    if estimate < LOOKUP_FROM:
        return False
    window = await window_of(agent.provider)
    if not window or estimate <= at * window:
        return False
    from .clearing import clear

    if clear(scratch):
        agent.output.say(f"old tool results cleared (~{estimate} of {window} tokens)", "info")
        estimate = agent.gauge.estimate(request_chars(agent, scratch))
        if estimate <= at * window or len(agent.conversation) < 3:
            return False
    if len(agent.conversation) < 3:  # some history besides the prompt
        return False
    reason = f"~{estimate} of {window} tokens, past {at:.0%} (ELELEM_COMPACT_AT)"
    return await compact(agent, reason, spare=1, scratch=scratch)


async def compact(
    agent: Agent,
    reason: str | None,
    spare: int = 0,
    scratch: Sequence[Message] = (),
    cached: bool = True,
    shown: bool = False,
) -> bool:
    """Replace the history (but its newest `spare` messages, kept after the summary)
    by its summary and the keepsakes, announced with `reason` (None: the caller says
    it, as /compact does). The summary reads the cached prefix when it fits (`cached`
    false: never, after a refusal for size), else comes in pieces; `shown` streams it
    to the Output. False, and the history kept, when no summary came (said as an error)."""
    conversation = agent.conversation
    if spare and len(conversation) <= spare:
        return False
    old = list(conversation)
    head, tail = old[: len(old) - spare], old[len(old) - spare :]
    window = await window_of(agent.provider)
    try:
        summary = await cached_summary(agent, scratch, window, shown) if cached else None
        if summary is None:
            summary = await summarise(agent.provider, head, window)
    except Exception as exc:
        log.warning("compaction failed: %s", exc)
        agent.output.say(f"compaction failed: {exc}" if reason else str(exc), "error")
        return False
    if window and len(summary) > (most := int(window * SUMMARY_SHARE * CHARS_PER_TOKEN)):
        summary = summary[:most] + " [summary cut]"  # a model that will not be brief
    kept = agent.keepsakes.carry(head, window, agent.transcript.system_prompt.cwd)
    replace(agent, conversation, f"{summary}\n\n{kept}" if kept else summary, tail)
    if reason is not None:
        plural = "" if len(head) == 1 else "s"
        said = f"context compacted: {len(head)} message{plural} became 1 ({reason})"
        agent.output.say(said, "info")
    return True


def replace(agent: Agent, conversation: Conversation, summary: str, tail: list[Message]) -> None:
    """The history becomes the summary, then `tail` (the prompt of the running turn).
    The summary is kept as no prompt (store/recorder.py); the tail as it was."""
    in_turn, agent.in_turn = agent.in_turn, False
    try:
        conversation.clear(compacted=True)  # the user's transcript keeps what came before
        conversation.add("user", f"{SUMMARY_PREFIX}{summary}")
    finally:
        agent.in_turn = in_turn
    for message in tail:
        conversation.add(message["role"], message["content"])
