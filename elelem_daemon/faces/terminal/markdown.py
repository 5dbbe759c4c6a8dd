"""Markdown as it streams: where the finished blocks end and the open one begins.

A streaming reply is rendered block by block: a block is finished once a blank line
follows it outside a code fence (or its closing fence line is complete), and is then
printed for good; the open block is redrawn as it grows. `Blocks` finds the
boundaries as the text arrives, reading each line once (a long reply costs linear
time, not quadratic); `split` is the same rule for a whole text.
"""

from __future__ import annotations

import re

FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


class Blocks:
    """A streaming reply's blocks: `feed` adds text and hands back what it finished;
    `open` is the rest, still growing."""

    def __init__(self) -> None:
        self.open = ""  # the text not yet finished
        self._scanned = 0  # how much of `open` is whole lines already read
        self._done = 0  # how much of `open` is finished
        self._fence: str | None = None

    def feed(self, text: str) -> str:
        """Add streamed text; the text this finished (empty when none did)."""
        self.open += text
        while (end := self.open.find("\n", self._scanned)) >= 0:
            self._line(self.open[self._scanned : end], end + 1)
            self._scanned = end + 1
        done, self._done = self._done, 0
        finished, self.open = self.open[:done], self.open[done:]
        self._scanned -= done
        return finished

    def _line(self, bare: str, after: int) -> None:
        bare = bare.rstrip("\r")
        opened = FENCE.match(bare)
        if self._fence is None:
            if opened:
                self._fence = opened.group(1)
            elif not bare.strip():
                self._done = after
        elif opened and opened.group(1).startswith(self._fence) and not bare.strip(" `~"):
            self._fence = None
            self._done = after  # the code block is complete


def split(text: str) -> int:
    """The length of the finished part of `text` (0 when every block is still open)."""
    return len(Blocks().feed(text))
