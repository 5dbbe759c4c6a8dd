"""Conversation: the ordered list of kept messages (roles user, assistant, tool).

`Message` is a chat message (`{role, content, ...}`), the one meaning of the word here.

Listeners hear every change as it happens: `listener("add", message)`,
`listener("clear", None)` (`{"compacted": True}` when a compaction emptied it, to put
its summary in place), `listener("turn", {"turn", "at"})` (a turn begins: its
`Mark`), `listener("rewind", {"turn"})` and `listener("edit", {"index", "content"})`
(a kept message replaced, or deleted when `content` is None: `/context edit`). The
session store uses this to write each kept message, each turn's start, each rewind
and each edit.

Turns are marked where they begin (`begin_turn`), with a number that only grows, so a
conversation can go back to what it was just before a turn (`rewind`), dropping that
turn and the later ones: the conversation's half of undo (docs/checkpoints.md). A
`/clear` since that turn is undone too: the history a clear emptied is kept while a
turn's mark still points into it, and forgotten otherwise.

A message's `content` is a string, or, for a user message that carries images, a list
of parts: `{"type": "text", "text"}` and `{"type": "image", "mimeType", "data"}` (data
in base64), in the order the model reads them. `text_of` gives any content as text,
each image as `[image: image/png, 1234 bytes]`: for previews, titles, and providers
that cannot see images.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]
Part = dict[str, str]
Content = str | list[Part]
Listener = Callable[[str, Message | None], None]


def is_content(value: Any) -> bool:
    """A string, or a list of text and image parts (what a kept message may hold)."""
    if isinstance(value, str):
        return True
    if not isinstance(value, list) or not value:
        return False
    for part in value:
        if not isinstance(part, dict):
            return False
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            continue
        if kind != "image" or not all(isinstance(part.get(k), str) for k in ("mimeType", "data")):
            return False
    return True


def image_bytes(part: Part) -> int:
    """The decoded size of an image part's base64 data."""
    data = part.get("data", "")
    return len(data) * 3 // 4 - len(data[-2:]) + len(data[-2:].rstrip("="))


def text_of(content: Any) -> str:
    """Any content as text: a string as it is, parts joined by a blank line."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    texts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image":
            texts.append(f"[image: {part.get('mimeType')}, {image_bytes(part)} bytes]")
        elif isinstance(part, dict):
            texts.append(str(part.get("text", "")))
    return "\n\n".join(texts)


def images_in(content: Any) -> list[Part]:
    """The image parts of a content (none for a string)."""
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get("type") == "image"]


@dataclass(frozen=True)
class Mark:
    """Where turn `turn` began: `at` (unix seconds), after `epoch` clears and `index`
    messages kept since the last one."""

    turn: int
    at: float
    epoch: int
    index: int


class Conversation:
    ROLES = ("user", "assistant", "tool")

    def __init__(self, messages: list[Message] | None = None) -> None:
        self._messages: list[Message] = []
        self._past: list[list[Message]] = []  # what each clear emptied, while a mark needs it
        self.marks: dict[int, Mark] = {}  # the turns still in the conversation, by number
        self.last_turn = 0  # the highest turn number begun: the next one is higher
        self.listeners: list[Listener] = []
        for message in messages or []:
            self.add(message["role"], message["content"])

    def add(self, role: str, content: Content) -> Message:
        if role not in self.ROLES:
            raise ValueError(f"invalid role: {role}")
        message = {"role": role, "content": content}
        self._messages.append(message)
        self._tell("add", message)
        return message

    @property
    def last(self) -> Message | None:
        return self._messages[-1] if self._messages else None

    def clear(self, compacted: bool = False) -> None:
        """Empty the conversation (`/clear`); `compacted`: a compaction empties it to
        keep its summary instead (the user still sees what came before: store.history)."""
        epoch = len(self._past)
        needed = any(mark.epoch == epoch for mark in self.marks.values())
        self._past.append(self._messages if needed else [])
        self._messages = []
        self._tell("clear", {"compacted": True} if compacted else None)

    def edit(self, index: int, content: Content | None) -> Message | None:
        """Replace the content of kept message `index` (from 0), or delete it (None):
        `/context edit` and `/context delete` (builtins/context_edit.py). The marks of
        the turns that began after it move with their messages. Listeners hear
        `("edit", {"index", "content"})`. IndexError when there is no such message."""
        if isinstance(index, bool) or not 0 <= index < len(self._messages):
            raise IndexError(f"no message {index!r}")
        if content is None:
            del self._messages[index]
            epoch = len(self._past)
            for turn, mark in list(self.marks.items()):
                if mark.epoch == epoch and mark.index > index:
                    self.marks[turn] = Mark(mark.turn, mark.at, mark.epoch, mark.index - 1)
            changed = None
        else:
            changed = self._messages[index] = {**self._messages[index], "content": content}
        self._tell("edit", {"index": index, "content": content})
        return changed

    # -- turns --------------------------------------------------------------------
    def begin_turn(self, turn: int, at: float | None = None) -> Mark:
        """Mark where turn `turn` begins (before its prompt is kept). Numbers only grow."""
        if isinstance(turn, bool) or not isinstance(turn, int) or turn <= self.last_turn:
            raise ValueError(f"turn {turn!r} does not follow turn {self.last_turn}")
        mark = Mark(turn, time.time() if at is None else at, len(self._past), len(self._messages))
        self.marks[turn] = mark
        self.last_turn = turn
        self._tell("turn", {"turn": turn, "at": mark.at})
        return mark

    def rewind(self, turn: int) -> list[int]:
        """Go back to just before turn `turn`: it and every later turn are dropped (a
        clear since then is undone). Returns the turns dropped; KeyError if `turn` is
        not in the conversation."""
        mark = self.marks[turn]
        if mark.epoch == len(self._past):
            del self._messages[mark.index :]
        else:
            self._messages = self._past[mark.epoch][: mark.index]
            del self._past[mark.epoch :]
        dropped = sorted(t for t in self.marks if t >= turn)
        for gone in dropped:
            del self.marks[gone]
        self._tell("rewind", {"turn": turn})
        return dropped

    def prompt_of(self, turn: int) -> Message | None:
        """The user message a turn began with, if it is still kept."""
        mark = self.marks.get(turn)
        if mark is None:
            return None
        messages = self._messages if mark.epoch == len(self._past) else self._past[mark.epoch]
        if mark.index < len(messages) and messages[mark.index]["role"] == "user":
            return messages[mark.index]
        return None

    def adopt(self, other: Conversation) -> None:
        """Take another conversation's messages, marks and cleared history (a stored
        session read back), telling the listeners nothing."""
        self._messages = list(other._messages)
        self._past = [list(part) for part in other._past]
        self.marks = dict(other.marks)
        self.last_turn = max(self.last_turn, other.last_turn)

    def _tell(self, event: str, message: Message | None) -> None:
        for listener in list(self.listeners):
            listener(event, message)

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __getitem__(self, index: int) -> Message:
        return self._messages[index]
