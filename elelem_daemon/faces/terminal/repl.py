"""Repl: reads lines from the input and dispatches each one: a slash command or a turn."""

from __future__ import annotations

from typing import Any

from ... import __version__


class Repl:
    def __init__(self, session: Any, resumed: str | None = None) -> None:
        self.session = session
        self.resumed = resumed  # the title of a resumed session, whose history is redrawn

    async def run(self) -> None:
        output = self.session.output
        output.say(f"elelem v{__version__}")
        if self.resumed is not None:
            from .resume import show_history

            show_history(self.session, self.resumed)
        while not self.session.exited:
            line = await self.session.input.readline("> ")
            if line is None:
                break
            await self.dispatch(line)

    async def dispatch(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        if line.startswith("/"):
            text = await self.session.command(line)
            self.session.output.say(text, "markdown" if line.startswith("/tools") else "plain")
        else:
            await self.session.turn(line)
