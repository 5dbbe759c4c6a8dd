"""History: what the faces redraw of a session, its kept messages and tool records in order.

It follows the conversation's changes as `Conversation` does (`add`, `clear`, `begin`
for a turn's start, `rewind`), so a rewound session redraws what the model still
reads: a turn's mark is where the history stood when it began, and a rewind goes back
to it, undoing a clear since. Entries are store records (`{type: "message", ...}` and
`{type: "tool", ...}`, with their times); the faces get them through
`recorder.history(session)` or `Stored.shown()`, times left out.
"""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]


class History:
    def __init__(self) -> None:
        self.entries: list[Record] = []
        self._past: list[list[Record]] = []  # what each clear emptied, while a mark needs it
        self._marks: dict[int, tuple[int, int]] = {}  # turn -> (clears before, index)

    def add(self, entry: Record) -> None:
        self.entries.append(entry)

    def clear(self) -> None:
        epoch = len(self._past)
        needed = any(mark[0] == epoch for mark in self._marks.values())
        self._past.append(self.entries if needed else [])
        self.entries = []

    def begin(self, turn: int) -> None:
        """Turn `turn` begins here (before its prompt)."""
        self._marks[turn] = (len(self._past), len(self.entries))

    def rewind(self, turn: int) -> None:
        """Back to just before turn `turn`, as the conversation went; a turn it never
        saw begin leaves it as it is."""
        mark = self._marks.get(turn)
        if mark is None:
            return
        epoch, index = mark
        if epoch == len(self._past):
            del self.entries[index:]
        else:
            self.entries = self._past[epoch][:index]
            del self._past[epoch:]
        for gone in [t for t in self._marks if t >= turn]:
            del self._marks[gone]

    def edit(self, index: int, content: Any) -> None:
        """Kept message `index` (counting messages only) replaced, or deleted (None), as
        the conversation's `edit` did; the tool records stay where they are. An index
        past the messages (a hand-edited file) changes nothing."""
        at = [i for i, e in enumerate(self.entries) if e.get("type") == "message"]
        if not 0 <= index < len(at):
            return
        where = at[index]
        if content is not None:
            self.entries[where] = {**self.entries[where], "content": content}
            return
        del self.entries[where]
        epoch = len(self._past)
        for turn, (clears, start) in list(self._marks.items()):
            if clears == epoch and start > where:
                self._marks[turn] = (clears, start - 1)

    def last_message(self) -> Record | None:
        return next((e for e in reversed(self.entries) if e.get("type") == "message"), None)

    def copy(self) -> History:
        other = History()
        other.entries = list(self.entries)
        other._past = [list(part) for part in self._past]
        other._marks = dict(self._marks)
        return other
