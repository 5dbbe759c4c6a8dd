"""History: what the faces redraw of a session, its kept messages and tool records in order.

It follows the conversation's changes as `Conversation` does (`add`, `clear`, `begin`
for a turn's start, `rewind`), so a rewound session redraws what the model still
reads: a turn's mark is where the history stood when it began, and a rewind goes back
to it, undoing a clear since. Entries are store records (`{type: "message", ...}` and
`{type: "tool", ...}`, with their times); the faces get them through
`recorder.history(session)` or `Stored.shown()`, times left out.

A compaction (`compact`) hides nothing from the user: the entries before it stay, a
`{"type": "compacted"}` marker follows them, and the summary and what comes after go on
from there; only the messages after the marker are the model's (`edit` counts those).
A `/clear` (`clear`) empties what the faces redraw, as before, and a rewind goes back
to where its turn began, before the compactions since, marker included.
`generation` changes whenever entries already there change or go (a clear, a rewind,
an edit), so a page cursor into them can tell it is stale (store/pages.py).
"""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]


class History:
    def __init__(self) -> None:
        self.entries: list[Record] = []
        self._past: list[list[Record]] = []  # what each clear emptied, while a mark needs it
        # turn -> (clears before, index, where the model's messages began then)
        self._marks: dict[int, tuple[int, int, int]] = {}
        self._start = 0  # entries before this index came before the last compaction
        self.generation = 0

    def add(self, entry: Record) -> None:
        self.entries.append(entry)

    def clear(self) -> None:
        epoch = len(self._past)
        needed = any(mark[0] == epoch for mark in self._marks.values())
        self._past.append(self.entries if needed else [])
        self.entries = []
        self._start = 0
        self.generation += 1

    def compact(self, at: str = "") -> None:
        """A compaction: the model's history starts again here; the user's goes on,
        with a marker."""
        self.entries.append({"type": "compacted", "at": at or _now()})
        self._start = len(self.entries)

    def begin(self, turn: int) -> None:
        """Turn `turn` begins here (before its prompt)."""
        self._marks[turn] = (len(self._past), len(self.entries), self._start)

    def rewind(self, turn: int) -> None:
        """Back to just before turn `turn`, as the conversation went; a turn it never
        saw begin leaves it as it is."""
        mark = self._marks.get(turn)
        if mark is None:
            return
        epoch, index, start = mark
        if epoch == len(self._past):
            del self.entries[index:]
        else:
            self.entries = self._past[epoch][:index]
            del self._past[epoch:]
        self._start = start
        self.generation += 1
        for gone in [t for t in self._marks if t >= turn]:
            del self._marks[gone]

    def edit(self, index: int, content: Any) -> None:
        """Kept message `index` (counting messages only) replaced, or deleted (None), as
        the conversation's `edit` did; the tool records stay where they are. An index
        past the messages (a hand-edited file) changes nothing."""
        at = [
            i
            for i, e in enumerate(self.entries[self._start :], self._start)
            if e.get("type") == "message"
        ]
        if not 0 <= index < len(at):
            return
        where = at[index]
        self.generation += 1
        if content is not None:
            self.entries[where] = {**self.entries[where], "content": content}
            return
        del self.entries[where]
        epoch = len(self._past)
        for turn, (clears, begun, start) in list(self._marks.items()):
            if clears == epoch and begun > where:
                self._marks[turn] = (clears, begun - 1, start)

    def last_message(self) -> Record | None:
        return next((e for e in reversed(self.entries) if e.get("type") == "message"), None)

    def copy(self) -> History:
        other = History()
        other.entries = list(self.entries)
        other._past = [list(part) for part in self._past]
        other._marks = dict(self._marks)
        other._start = self._start
        return other


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
