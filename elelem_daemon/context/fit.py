"""Fit: an attachment never breaks the window (issue 40).

A file attached or `@`-mentioned is cut, before anything is sent and before any
compaction, to its share of the model's window: the attachments of one message together
take at most ELELEM_ATTACH_SHARE of the window (default 0.5), and never more than the
room the fixed part of a request (the system prompt and the tools) leaves below
ELELEM_COMPACT_AT with REPLY_ROOM of the window kept for the turn's replies; each text
attachment gets an equal part. The history does not count: compaction can always take
it away, while the attachment would come back with every request.

A cut keeps whole lines from the start and says so twice, in the same words:
- in the block the model reads, its `note`: `cut: lines 1–800 of 6,000; ask for more
  with read`;
- to the user, an `info` line every face shows (the terminal's info line, the daemon's
  `event/say`, an ACP message chunk): `@big.txt was cut to fit the model's window: …`.

So an attachment cannot push a fresh request past the compaction threshold, and
compaction never repeats turn after turn for the same content: what a compaction
carries of it is its name (keepsakes.py), not its text. The window is looked up only
for an attachment of LOOKUP_FROM tokens or more (a small one never asks); with no
window known nothing is cut beyond the `read` caps.

A mention that attaches nothing (a path outside the working directory, a file that
does not exist) is said to the user the same way (`@../x.txt attaches nothing: …`).
"""

from __future__ import annotations

from typing import Any

CHARS_PER_TOKEN = 4
REPLY_ROOM = 0.15  # of the window: kept free below the threshold for the turn's replies
MIN_CHARS = 400  # an attachment keeps at least this much (a few lines)


def attach_share() -> float:
    """`ELELEM_ATTACH_SHARE`: the share of the window one message's attachments may take."""
    from .compaction import share

    return share("ELELEM_ATTACH_SHARE", 0.5)


class Fit:
    """One message's fitting: `provider` (its window), `fixed` (characters of the system
    prompt and tools) and `count` (its text attachments). `notes` gathers what the user
    is told."""

    def __init__(self, provider: Any, fixed: int = 0, count: int = 1) -> None:
        self.provider = provider
        self.fixed = fixed
        self.count = max(count, 1)
        self.notes: list[str] = []
        self._limit: int | None | bool = False  # False: not asked yet

    async def limit(self, chars: int) -> int | None:
        """The characters one attachment of `chars` may take; None when it need not be
        cut (small, no window known, or ELELEM_ATTACH_SHARE=0)."""
        from .compaction import LOOKUP_FROM, compact_at, window_of

        if chars < LOOKUP_FROM * CHARS_PER_TOKEN or attach_share() <= 0:
            return None
        if self._limit is False:
            window = await window_of(self.provider)
            if not window:
                self._limit = None
            else:
                at = compact_at() or 1.0
                room = (at - REPLY_ROOM) * window - self.fixed / CHARS_PER_TOKEN
                tokens = min(attach_share() * window, room) / self.count
                self._limit = max(int(tokens * CHARS_PER_TOKEN), MIN_CHARS)
        return self._limit if isinstance(self._limit, int) else None

    def cut(self, shown: str, first: int, total: int, limit: int, name: str) -> tuple[str, str]:
        """`shown` (lines from `first` on) cut to whole lines within `limit`, and the
        note the model reads; the user's line is kept in `notes`."""
        kept: list[str] = []
        used = 0
        for line in shown.splitlines(keepends=True):
            if kept and used + len(line) > limit:
                break
            kept.append(line if len(line) <= limit else line[:limit] + "\n")
            used += len(kept[-1])
        last = first + len(kept) - 1
        where = f"lines {first}–{last} of {total:,}"
        self.notes.append(f"@{name} was cut to fit the model's window: {where}")
        return "".join(kept), f"cut: {where}; ask for more with read"

    async def fitted(
        self, shown: str, first: int, text: str, name: str
    ) -> tuple[str, int, int, str] | None:
        """`shown` (lines of `text` from `first` on) cut to its share as (text, first,
        last, note), or None when it fits."""
        limit = await self.limit(len(shown))
        if limit is None or len(shown) <= limit:
            return None
        body, note = self.cut(shown, first, line_count(text), limit, name)
        return body, first, first + line_count(body) - 1, note


def fixed_chars(session: Any) -> int:
    """The characters of a request's fixed part: the system prompt and the tools."""
    agent = getattr(session, "agent", None)
    if agent is None:
        return 0
    from .compaction import size

    system = {"role": "system", "content": agent.transcript.system_prompt.render()}
    return size([system], agent.toolbox.definitions(agent.tool_filter))


def line_count(text: str) -> int:
    """The lines of a text, a last one without its line break counted."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)
