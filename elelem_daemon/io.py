"""Input and Output: the ports through which a session reads the user and shows what
the agent does. `Output` and `Input` say what every implementation has; each face
brings its own (the terminal's, the daemon's events, ACP's updates), and plugins may
replace the terminal's (see `Plugin.input` / `Plugin.output`). The null forms are the
defaults: NullOutput is silent in every method, NullInput answers from a script (or not
at all), so an Agent works with no terminal and no editor.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from .result import Result

if TYPE_CHECKING:
    from .commands import Commands


class Output(Protocol):
    """What the agent and the commands call to show what happens (NullOutput documents
    each method)."""

    def say(self, text: str, kind: str = "plain") -> None: ...

    def thinking(self, text: str) -> None: ...

    def saying(self, text: str) -> None: ...

    def reply(self, text: str) -> None: ...

    def doing(self, call: dict[str, Any]) -> None: ...

    def result(self, call: dict[str, Any], result: Result) -> None: ...

    def waiting(self) -> None: ...


class Input(Protocol):
    """What a session reads from: lines (the terminal's REPL) and answers to questions."""

    async def readline(self, prompt: str = "> ") -> str | None: ...

    async def ask(
        self, prompt: str, options: list[str] | None = None, **details: Any
    ) -> str | None: ...


class NullOutput:
    """Prints nothing. Every Output has these methods."""

    def say(self, text: str, kind: str = "plain") -> None:
        """Text that is not a reply: `plain`, `markdown`, `info` or `error`."""

    def thinking(self, text: str) -> None:
        """A thinking delta, shown dimmed and never stored."""

    def saying(self, text: str) -> None:
        """A reply delta, as it streams."""

    def reply(self, text: str) -> None:
        """The whole text of one fetch, once it has streamed (rendered as Markdown)."""

    def doing(self, call: dict[str, Any]) -> None:
        """A tool call about to run: {id, name, arguments}, name canonical."""

    def result(self, call: dict[str, Any], result: Result) -> None:
        """A tool call's result."""

    def waiting(self) -> None:
        """The agent is waiting for the model."""


class NullInput:
    """Answers from a script of lines, then None (end of input / no answer)."""

    def __init__(
        self, answers: Iterable[str | None] = (), commands: Commands | None = None
    ) -> None:
        self._answers = list(answers)
        self.commands = commands

    async def readline(self, prompt: str = "> ") -> str | None:
        return self._answers.pop(0) if self._answers else None

    async def ask(
        self, prompt: str, options: list[str] | None = None, **details: Any
    ) -> str | None:
        """A question for the user; None when no one answers.

        `details` says what is asked: `kind` is `question` (the default) or
        `permission`, which also carries `tool: {name, arguments, diff?}`, and
        `user_only: True` for a question no auto-approver may answer (a write to a
        protected path): an Input whose client could answer it without the user raises
        CannotAsk instead.
        """
        return self._answers.pop(0) if self._answers else None


class CannotAsk(Exception):
    """Raised by an Input's `ask` for a `user_only` question it will not put to its
    client: that client may answer without the user (an ACP client's approve-all
    setting). The message says why, in a clause (`this ACP client ...`); the asker
    refuses what it asked about and says so (builtins/permissions.py)."""


async def ask(
    input: Input, prompt: str, options: list[str] | None = None, **details: Any
) -> str | None:
    """input.ask with details, also for a plugin Input whose ask takes only (prompt, options)."""
    try:
        params = list(inspect.signature(input.ask).parameters.values())
    except (TypeError, ValueError):
        params = []
    takes = any(p.kind is p.VAR_KEYWORD for p in params)
    known = {p.name for p in params}
    return await input.ask(
        prompt, options, **{k: v for k, v in details.items() if takes or k in known}
    )
