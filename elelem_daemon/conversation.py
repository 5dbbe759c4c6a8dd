"""Conversation: the ordered list of kept messages (roles user, assistant, tool).

`Message` is a chat message (`{role, content, ...}`), the one meaning of the word here.

Listeners hear every change as it happens: `listener("add", message)` and
`listener("clear", None)`. The session store uses this to write each kept message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Message = dict[str, Any]
Listener = Callable[[str, Message | None], None]


class Conversation:
    ROLES = ("user", "assistant", "tool")

    def __init__(self, messages: list[Message] | None = None) -> None:
        self._messages: list[Message] = []
        self.listeners: list[Listener] = []
        for message in messages or []:
            self.add(message["role"], message["content"])

    def add(self, role: str, content: str) -> Message:
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

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __getitem__(self, index: int) -> Message:
        return self._messages[index]
