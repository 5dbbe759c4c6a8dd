"""Repl: reads lines from the input and dispatches each one: a slash command or a turn.
The terminal is the client here: `/exit` (a command's `exit`) ends the loop. A line's
`@` mentions are the core's (`Session.turn` expands them); one it refuses is printed
as an error, nothing is kept, and the line stays in the input's history."""

from __future__ import annotations

from ... import __version__
from ...errors import AttachmentError
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
            kind = "markdown" if line.startswith("/tools") else "plain"
            self.session.output.say(result.output, kind)
            return not result.exit
        try:
            await self.session.turn(line)
        except AttachmentError as exc:
            self.session.output.say(str(exc), "error")
        return True
