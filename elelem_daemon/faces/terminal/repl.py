"""Repl: reads lines from the input and dispatches each one: a slash command or a turn.
The terminal is the client here: `/exit` (a command's `exit`) ends the loop."""

from __future__ import annotations

from ... import __version__
from ...session import Session


class Repl:
    def __init__(self, session: Session, resumed: str | None = None) -> None:
        self.session = session
        self.resumed = resumed  # the title of a resumed session, whose history is redrawn

    async def run(self) -> None:
        output = self.session.output
        output.say(f"elelem v{__version__}")
        if self.resumed is not None:
            from .resume import show_history

            show_history(self.session, self.resumed)
        while (line := await self.session.input.readline("> ")) is not None:
            if not await self.dispatch(line):
                break

    async def dispatch(self, line: str) -> bool:
        """Run one line; False when it asked to leave."""
        line = line.strip()
        if not line:
            return True
        if line.startswith("/"):
            result = await self.session.command(line)
            self.session.output.say(result.output, "markdown" if result.markdown else "plain")
            return not result.exit
        await self.session.turn(line)
        return True
