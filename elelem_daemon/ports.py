"""Ports: what the core asks of a provider, and what it offers plugins and faces of a
session. Structural types (`typing.Protocol`): anything with these members fits.

    Provider      `name`, `model` and `fetch(messages, tools)`, an async generator of
                  events (docs/plugins.md, "Providers"; the agent closes it early on
                  cancel); `aclose()` if it holds a connection, called when a session
                  drops the provider
    TOOL_CHOICE   the tool choice of the request being made, for providers to read
                  in their request: None (the provider's own settings) or `none` (a
                  compaction's summary, context/compaction.py: the tools stay in the
                  request, so its prefix is the conversation's cached one, and no call
                  may be made; a call returned anyway is ignored)
    SessionView   the session as tools, commands, setup blocks, hooks and the store
                  see it (docs/plugins.md, "The session"); `Session` is the one
                  implementation
    Checkpointer  a session's file history, at `session.checkpoints`: what `rewind.py`
                  asks of it (the built-in plugin `builtins/checkpoints.py` fills it;
                  the core never learns about git)
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .agent import TurnResult
    from .commands import Commands
    from .conversation import Content, Conversation, Message
    from .edits.changes import Seen
    from .edits.filesystem import Files
    from .io import Input, Output
    from .registry import Registry
    from .safety.vetted import HeldFile
    from .toolbox import Toolbox
    from .transcript import SystemPrompt
    from .turns.modes import Modes
    from .turns.plans import Plan
    from .turns.usage import Meter

Event = dict[str, Any]
TOOL_CHOICE: ContextVar[str | None] = ContextVar("tool_choice", default=None)


class Provider(Protocol):
    name: str

    def fetch(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> AsyncGenerator[Event, None]: ...


class SessionView(Protocol):
    id: str
    cwd: Path
    project: bool
    rules: tuple[tuple[str, str], ...]  # permission rules from the command line
    provider_name: str
    model: str | None
    registry: Registry
    files: Files
    seen: Seen
    input: Input
    commands: Commands
    turns: int
    turn_id: int | None
    checkpoints: Checkpointer | None
    modes: Modes
    plan: Plan
    permissions: object  # the permission policy's slot (builtins/permissions.py)
    skills: object  # the skills' slot (builtins/skills.py)
    usage: Meter  # tokens, context and cost of the turns (turns/usage.py)
    held: list[HeldFile]  # the user's files held, as shown (safety/vetted.py)

    @property
    def provider(self) -> Provider: ...

    @property
    def answering(self) -> str | None: ...

    @property
    def toolbox(self) -> Toolbox: ...

    @property
    def output(self) -> Output: ...

    @property
    def conversation(self) -> Conversation: ...

    @property
    def context(self) -> list[Message]: ...

    @property
    def system_prompt(self) -> SystemPrompt: ...

    @property
    def last_turn(self) -> TurnResult | None: ...

    async def turn(
        self, prompt: Content, attachments: Sequence[Any] = (), keep: bool = True
    ) -> TurnResult: ...

    def switch(self, provider_name: str | None = None, model: str | None = None) -> None: ...

    def reload(self) -> None: ...

    def exit(self) -> None: ...


class Checkpointer(Protocol):
    """The working tree's history for one session (docs/checkpoints.md). Every method
    raises ElelemErrors the faces answer as they are (rewind.py names them)."""

    @property
    def enabled(self) -> bool:
        """Checkpoints are taken (not `ELELEM_CHECKPOINTS=0`)."""
        ...

    def running(self) -> str | None:
        """The id of another session of this folder whose turn runs now (in this process
        or another elelem process), or None."""
        ...

    async def restore(
        self, turn: int, dry_run: bool, force: bool, confirm: list[str] | None = None
    ) -> dict[str, Any]:
        """Put the tree back as it was before `turn`: `{restored, created, deleted,
        createdBy, kept, dirsCreated, dirsRemoved, outside, unsaved, uncovered, kind}`.
        Without `force`, files changed outside the agent since stop it (OutsideChanges,
        with the plan), unless each is in `confirm` (the list the user agreed to lose)."""
        ...

    async def forget(self, since: int) -> None:
        """Drop the checkpoints of `since` and later turns (a conversation rewind)."""
        ...

    async def listed(self) -> dict[int, dict[str, Any]]:
        """The session's checkpoints by turn: `{kind, at, ended, files, filesTotal}`."""
        ...
