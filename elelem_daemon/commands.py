"""Commands: the slash commands a user can type (`/context`, `/tools`, ...)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .context.paths import complete_word

CommandHandler = Callable[[str | None], Any]
Completions = Iterable[str] | Callable[[], Iterable[str]] | None


@dataclass
class SlashCommand:
    name: str
    description: str
    handler: CommandHandler
    completions: Completions = None

    def complete(self, partial: str = "") -> list[str]:
        source = self.completions() if callable(self.completions) else self.completions
        return [item for item in (source or []) if item.startswith(partial)]


class Commands:
    def __init__(self) -> None:
        self._commands: dict[str, SlashCommand] = {}

    def register(
        self,
        name: str,
        description: str = "",
        completions: Completions = None,
        handler: CommandHandler | None = None,
    ) -> Any:
        """Register a command; without a handler, returns a decorator taking it."""
        if handler is None:

            def decorate(fn: CommandHandler) -> CommandHandler:
                self.register(name, description, completions, fn)
                return fn

            return decorate
        name = name.lstrip("/")
        self._commands[name] = SlashCommand(name, description, handler, completions)
        return handler

    async def run(self, name: str, args: str | None = None) -> bool:
        """Run a command by name (with or without its slash); False when there is none."""
        command = self._commands.get(name.lstrip("/"))
        if command is None:
            return False
        value = command.handler(args)
        if inspect.isawaitable(value):
            await value
        return True

    def remove(self, name: str) -> SlashCommand | None:
        return self._commands.pop(name.lstrip("/"), None)

    def get(self, name: str) -> SlashCommand | None:
        return self._commands.get(name.lstrip("/"))

    def names(self) -> list[str]:
        return [f"/{name}" for name in self._commands]

    def completions_for(self, name: str, partial: str = "") -> list[str]:
        command = self.get(name)
        return command.complete(partial) if command else []

    def clear(self) -> None:
        self._commands.clear()

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter([(f"/{c.name}", c.description) for c in self._commands.values()])

    def __contains__(self, name: str) -> bool:
        return name.lstrip("/") in self._commands

    def complete(self, line: str, cwd: Path | None = None) -> list[str]:
        """Candidates for the last word of a prompt line, as elelem completes them:
        `/` and no space -> command names; `/cmd partial` -> that command's
        completions; anything else -> paths under cwd (paths.complete_word: the cwd's
        index, `.gitignore` honoured; `@src/a` -> `@src/app.py`), at most 20."""
        if line.startswith("/"):
            name, space, partial = line[1:].partition(" ")
            if not space:
                return [n for n in self.names() if n.startswith(line)]
            return self.completions_for(name, partial)
        word = line.rsplit(" ", 1)[-1] if line else ""
        return complete_word(word, cwd or Path.cwd())

    @staticmethod
    def parse(line: str) -> tuple[str, str | None]:
        """`/provider openai` -> (`provider`, `openai`); no argument -> None."""
        name, _, args = line.strip().lstrip("/").partition(" ")
        return name, (args.strip() or None)
