"""Conversation: the ordered list of kept messages (roles user, assistant, tool).

Listeners hear every change as it happens: `listener("add", message)` and
`listener("clear", None)`. The session store uses this to write each kept message.

A message's `content` is a string, or, for a user message that carries images, a list
of parts: `{"type": "text", "text"}` and `{"type": "image", "mimeType", "data"}` (data
in base64), in the order the model reads them. `text_of` gives any content as text,
each image as `[image: image/png, 1234 bytes]`: for previews, titles, and providers
that cannot see images.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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


class Conversation:
    ROLES = ("user", "assistant", "tool")

    def __init__(self, messages: list[Message] | None = None) -> None:
        self._messages: list[Message] = []
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

    def clear(self) -> None:
        self._messages.clear()
        self._tell("clear", None)

    def _tell(self, event: str, message: Message | None) -> None:
        for listener in list(self.listeners):
            listener(event, message)

    def to_list(self, system_prompt: str | None = None) -> list[Message]:
        head = [{"role": "system", "content": system_prompt}] if system_prompt else []
        return head + list(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __getitem__(self, index: int) -> Message:
        return self._messages[index]
