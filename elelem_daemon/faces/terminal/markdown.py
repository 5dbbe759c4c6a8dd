"""Markdown as it streams: where the finished blocks end and the open one begins.

A streaming reply is rendered block by block: a block is finished once a blank line
follows it outside a code fence (or its closing fence line is complete), and is then
printed for good; the open block is redrawn as it grows. `split` finds the boundary.
"""

from __future__ import annotations

import re

FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def split(text: str) -> int:
    """The length of the finished part of `text`: the offset just past the last blank
    line (or closed fence) outside a code fence; 0 when every block is still open."""
    done = 0
    fence: str | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        offset += len(line)
        if not line.endswith("\n"):
            break  # the last line is still arriving
        bare = line.rstrip("\r\n")
        opened = FENCE.match(bare)
        if fence is None:
            if opened:
                fence = opened.group(1)
            elif not bare.strip():
                done = offset
        elif opened and opened.group(1).startswith(fence) and not bare.strip(" `~"):
            fence = None
            done = offset  # the code block is complete
    return done
