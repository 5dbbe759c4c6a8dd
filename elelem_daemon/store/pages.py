"""Pages: a session's history as the faces redraw it, newest page first, a page at a time.

A large session's history is tens of megabytes; encoding it as one answer holds the
process (Python's JSON encoder holds the GIL) and every other request waits. So a face
gets the newest page when it opens a session, and asks for the older ones, each with
the `cursor` the page before gave, until a page comes with none (protocol.md,
`session/history`).

A page is the entries just before the cursor's place (the newest ones for the first),
in order, oldest first, as many as fit `PAGE_WEIGHT` characters of text (a cheap count
of their strings, no encoding) and `PAGE_ENTRIES` entries, and at least one. Its cursor
is `"<generation>.<index>"`: where it began in the history's entries, and the history's
`generation` then (history.py: a clear, rewind or edit changes it). New entries come
after the cursors already given, so those stay good; a cursor of another generation
is stale (`InvalidParams`, the face loads the session again), and one that is no such
text is refused the same way.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import InvalidParams

Record = dict[str, Any]
PAGE_WEIGHT = 256 * 1024  # characters of text in one page, about (its JSON is a little more)
PAGE_ENTRIES = 500
MAX_CURSOR = 40  # characters: two whole numbers and a dot


def weight(value: Any, depth: int = 0) -> int:
    """About how many characters `value` takes as JSON: its strings' lengths, and a
    few for everything else (no encoding: a page's cost is counted before it is made)."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, dict) and depth < 8:
        return sum(len(str(k)) + 4 + weight(v, depth + 1) for k, v in value.items()) + 2
    if isinstance(value, list | tuple) and depth < 8:
        return sum(weight(v, depth + 1) + 1 for v in value) + 2
    return 8


def shown(entry: Record) -> Record:
    """An entry as faces get it: without its time. A compaction's summary keeps its
    `prompt: false` (the model's to read, not a prompt the user typed)."""
    return {k: v for k, v in entry.items() if k != "at"}


def page(
    entries: list[Record], generation: int, cursor: str | None = None
) -> tuple[list[Record], str | None]:
    """The page before `cursor` (the newest without one), and the cursor of the page
    before it (None: this page is the oldest)."""
    end = len(entries) if cursor is None else where(cursor, generation, len(entries))
    start, total = end, 0
    while start > 0 and end - start < PAGE_ENTRIES:
        cost = weight(entries[start - 1])
        if start < end and total + cost > PAGE_WEIGHT:
            break
        total += cost
        start -= 1
    before = f"{generation}.{start}" if start > 0 else None
    return [shown(entry) for entry in entries[start:end]], before


def where(cursor: str, generation: int, length: int) -> int:
    """The index a cursor names, or InvalidParams when it names none of this history."""
    if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR or not cursor.isascii():
        raise InvalidParams("cursor: not one this daemon gave", errors=["cursor: unknown"])
    made, _, index = cursor.partition(".")
    if not (made.isdigit() and index.isdigit()):
        raise InvalidParams("cursor: not one this daemon gave", errors=["cursor: unknown"])
    if int(made) != generation:
        raise InvalidParams(
            "cursor: the history changed since (a clear, rewind or edit): load the session again",
            errors=["cursor: stale"],
        )
    if not 0 < int(index) <= length:
        raise InvalidParams("cursor: not one this daemon gave", errors=["cursor: unknown"])
    return int(index)
