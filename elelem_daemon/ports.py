"""Ports: what the core asks of a provider, and what it offers plugins and faces of a
session. Structural types (`typing.Protocol`): anything with these members fits.

    Provider      `name`, `model` and `fetch(messages, tools)`, an async generator of
                  events (docs/plugins.md, "Providers"; the agent closes it early on
                  cancel); `aclose()` if it holds a connection, called when a session
                  drops the provider
    SessionView   the session as tools, commands, setup blocks, hooks and the store
                  see it (docs/plugins.md, "The session"); `Session` is the one
                  implementation
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .agent import TurnResult
    from .changes import Seen
    from .commands import Commands
    from .conversation import Content, Conversation, Message
    from .filesystem import Files
    from .io import Input, Output
    from .registry import Registry
    from .toolbox import Toolbox

Event = dict[str, Any]


class Provider(Protocol):
    name: str

    def fetch(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> AsyncGenerator[Event, None]: ...


class SessionView(Protocol):
    id: str
    cwd: Path
    project: bool
    provider_name: str
    model: str | None
    registry: Registry
    files: Files
    seen: Seen
    input: Input
    commands: Commands

    @property
    def provider(self) -> Provider: ...

    @property
    def toolbox(self) -> Toolbox: ...

    @property
    def output(self) -> Output: ...

    @property
    def conversation(self) -> Conversation: ...

    @property
    def context(self) -> list[Message]: ...

    @property
    def last_turn(self) -> TurnResult | None: ...

    async def turn(self, prompt: Content, keep: bool = True) -> TurnResult: ...

    def switch(self, provider_name: str | None = None, model: str | None = None) -> None: ...

    def reload(self) -> None: ...

    def exit(self) -> None: ...
