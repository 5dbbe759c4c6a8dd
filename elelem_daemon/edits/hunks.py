"""Hunks: one change to a file, cut into the pieces a user accepts or rejects.

The one home of diffs in the package: the unified diff a `write` or `edit` shows, and
the hunks an editor or the terminal reviews, come from the same cut.

- `split(old, new)` cuts the change into hunks as `git diff` and `git add -p` show
  them (three lines of context; changes closer than that share a hunk). Ids are 1, 2,
  ... in file order: the same two texts always give the same hunks.
- `apply(old, new, hunks, accepted)` applies exactly the accepted hunks to `old`.
  All of them give `new`, none give `old` (property-tested).
- Lines are what an editor counts: text up to and including each "\n" (a "\r\n" line
  is one line; the last line may lack its "\n"). `oldStart`/`oldLines` and
  `newStart`/`newLines` follow unified diff headers: 1-based; a range of 0 lines
  starts at the line before it (0: the top of the file).
- Sides past DIFF_INPUT_CAP characters are not compared: the change is one hunk, the
  whole file, and its diff a note.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

CONTEXT = 3
DIFF_CAP = 50_000  # characters of a diff shown (to the model, in a result)
DIFF_INPUT_CAP = 2_000_000  # characters per side past which nothing is compared
NO_NEWLINE = "\\ No newline at end of file\n"


def lines(text: str | None) -> list[str]:
    """The lines of text, each with its "\\n" (the last may have none)."""
    if not text:
        return []
    parts = text.split("\n")
    out = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


@dataclass(frozen=True)
class Hunk:
    """One hunk: where it sits in the old and new text, its unified diff (header
    first), and the edits it makes as (old from, old to, new from, new to) line slices."""

    id: int
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    diff: str
    edits: tuple[tuple[int, int, int, int], ...]

    def to_wire(self) -> dict[str, Any]:
        """The hunk as protocol.md's `files/propose` shows it."""
        return {
            "id": self.id,
            "oldStart": self.old_start,
            "oldLines": self.old_lines,
            "newStart": self.new_start,
            "newLines": self.new_lines,
            "diff": self.diff,
        }


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"


def _start(first: int, count: int) -> int:
    """A 1-based start line as unified headers write it (an empty range: the line before)."""
    return first + 1 if count else first


def _shown(prefix: str, line: str) -> str:
    return f"{prefix}{line}" if line.endswith("\n") else f"{prefix}{line}\n{NO_NEWLINE}"


def split(old: str | None, new: str, context: int = CONTEXT) -> list[Hunk]:
    """The hunks from old (None: no file) to new. Run it in a thread for big texts."""
    a, b = lines(old), lines(new)
    if a == b:
        return []
    if max(len(old or ""), len(new)) > DIFF_INPUT_CAP:
        size = max(len(old or ""), len(new))
        header = (
            f"@@ -{_range(_start(0, len(a)), len(a))} +{_range(_start(0, len(b)), len(b))} @@\n"
        )
        note = f"[no diff: {size} characters, past {DIFF_INPUT_CAP}]\n"
        return [Hunk(1, _start(0, len(a)), len(a), _start(0, len(b)), len(b), header + note,
                     ((0, len(a), 0, len(b)),))]  # fmt: skip
    hunks = []
    matcher = difflib.SequenceMatcher(None, a, b)
    for number, group in enumerate(matcher.get_grouped_opcodes(context), 1):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        body, edits = [], []
        for tag, o1, o2, n1, n2 in group:
            if tag == "equal":
                body += [_shown(" ", line) for line in a[o1:o2]]
                continue
            body += [_shown("-", line) for line in a[o1:o2]]
            body += [_shown("+", line) for line in b[n1:n2]]
            edits.append((o1, o2, n1, n2))
        old_start, new_start = _start(i1, i2 - i1), _start(j1, j2 - j1)
        header = f"@@ -{_range(old_start, i2 - i1)} +{_range(new_start, j2 - j1)} @@\n"
        hunks.append(
            Hunk(number, old_start, i2 - i1, new_start, j2 - j1, header + "".join(body),
                 tuple(edits))
        )  # fmt: skip
    return hunks


def apply(old: str | None, new: str, hunks: Iterable[Hunk], accepted: Iterable[int]) -> str:
    """old with exactly the accepted hunks (ids) of the change old -> new applied."""
    a, b = lines(old), lines(new)
    chosen = set(accepted)
    out: list[str] = []
    at = 0
    for hunk in sorted(hunks, key=lambda h: h.id):
        if hunk.id not in chosen:
            continue
        for o1, o2, n1, n2 in hunk.edits:
            out += a[at:o1]
            out += b[n1:n2]
            at = o2
    out += a[at:]
    return "".join(out)


def unified(before: str | None, after: str, name: str, hunks: list[Hunk] | None = None) -> str:
    """The unified diff from before (None: no file) to after, as git shows a missing
    newline; cut to DIFF_CAP characters (whole lines)."""
    cut = split(before, after) if hunks is None else hunks
    if not cut:
        return ""
    head = f"--- {'/dev/null' if before is None else name}\n+++ {name}\n"
    text = head + "".join(hunk.diff for hunk in cut)
    if len(text) > DIFF_CAP:
        end = text.rfind("\n", 0, DIFF_CAP) + 1 or DIFF_CAP
        text = f"{text[:end]}[... diff truncated: {len(text) - end} more characters]\n"
    return text


async def diff(before: str | None, after: str, name: str) -> str:
    """`unified`, in a thread; a note instead when a side is too large to compare."""
    size = max(len(before or ""), len(after))
    if size > DIFF_INPUT_CAP:
        return f"[no diff: {size} characters, past {DIFF_INPUT_CAP}]\n"
    return await asyncio.to_thread(unified, before, after, name)


def where(hunks: list[Hunk], accepted: Iterable[int], hunk: Hunk) -> tuple[int, int]:
    """The first and last line, in the text after `accepted` were applied, of the lines
    a (rejected) hunk covers: its old lines, moved by the accepted hunks before it."""
    chosen = set(accepted)
    shift = sum(h.new_lines - h.old_lines for h in hunks if h.id in chosen and h.id < hunk.id)
    first = hunk.old_start + shift
    return first, first + max(hunk.old_lines, 1) - 1
