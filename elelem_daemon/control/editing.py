"""Editing the kept conversation (elelem backlog 021), the rules every face shares:
`/context delete` and `/context edit` (builtins/context_edit.py) and the daemon's
`session/editContext`.

Messages are numbered as `/context` lists them: 1 is the system prompt (rendered
afresh at each request: it cannot be edited or deleted; AGENTS.md is where it comes
from), 2 the first kept message, and so on. Every change goes through
`Conversation.edit`, so the store records it (`edit` records, store/records.py) and a
resumed session shows the edited conversation. A bad request (a number out of range,
the system prompt, a malformed or too long list) raises EditError saying why, before
anything changes. A message with images keeps them when its text is edited.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..base.errors import InvalidParams
from ..conversation import Content, Message, text_of

if TYPE_CHECKING:
    from ..ports import SessionView

MAX_SPEC = 1000  # characters of a `/context delete` list
SPAN = re.compile(r"^(\d{1,9})(?:\s*-\s*(\d{1,9}))?$")
CHARS_PER_TOKEN = 4


class EditError(InvalidParams):
    """An edit that cannot be done: its message says why; nothing changed."""

    kind = "invalid_edit"

    def __init__(self, message: str) -> None:
        super().__init__(message, errors=[message])


def tokens(message: Message) -> int:
    """About how many tokens a message is (its text, at CHARS_PER_TOKEN a token)."""
    return max(1, -(-len(text_of(message.get("content"))) // CHARS_PER_TOKEN))


def numbers(spec: str, count: int) -> list[int]:
    """The message numbers `3,4`, `3-5` or `2, 4-6` name, sorted, each once; `count` is
    how many `/context` lists (the system prompt is 1). EditError when malformed or out
    of range."""
    if len(spec) > MAX_SPEC:
        raise EditError(f"the list is over {MAX_SPEC} characters")
    if not spec.strip():
        raise EditError("which messages? e.g. /context delete 3,4 or /context delete 3-5")
    chosen: set[int] = set()
    for part in spec.split(","):
        found = SPAN.match(part.strip())
        if not found:
            raise EditError(f"not a message number or range: {part.strip()[:40]!r}")
        first = int(found.group(1))
        last = int(found.group(2) or first)
        if last < first:
            raise EditError(f"a range goes up: {first}-{last}")
        for number in (first, last):
            check(number, count)
        chosen.update(range(first, last + 1))
    return sorted(chosen)


def check(number: int, count: int, first: int = 1) -> None:
    """EditError unless `number` names a kept message (not the system prompt). Numbers
    are `/context`'s (from 1); with `first` 0 the errors count from 0 as
    `session/editContext`'s places do."""
    shown = number - 1 + first
    if number == 1:
        raise EditError(f"message {shown} is the system prompt: it cannot be edited (AGENTS.md is)")
    if not 2 <= number <= count:
        raise EditError(f"no message {shown}: the messages are {first + 1} to {count - 1 + first}")


def delete(session: SessionView, chosen: list[int]) -> str:
    """Delete those messages (numbers as `/context` lists them)."""
    for number in sorted(chosen, reverse=True):
        session.conversation.edit(number - 2, None)
    shown = ", ".join(str(n) for n in chosen)
    plural = "s" if len(chosen) > 1 else ""
    return f"  → deleted message{plural} {shown}"


def replace(session: SessionView, number: int, text: str, first: int = 1) -> str:
    """Message `number` now holds `text`; an empty text deletes it."""
    check(number, len(session.context), first)
    if not text.strip():
        session.conversation.edit(number - 2, None)
        return f"  → deleted message {number} (the edit was empty)"
    old = session.conversation[number - 2]["content"]
    if text == text_of(old):
        return f"  → message {number} unchanged"
    session.conversation.edit(number - 2, with_text(old, text))
    return f"  → edited message {number}"


def with_text(old: Content, text: str) -> Content:
    """The new content: the text, and the images the message had, in front of it."""
    if not isinstance(old, list):
        return text
    images = [part for part in old if part.get("type") == "image"]
    return [*images, {"type": "text", "text": text}] if images else text
