"""Repl: reads lines from the input and dispatches each one: a slash command or a turn.

The terminal is the client here: `/exit` (a command's `exit`) ends the loop. The
session is held as a `Live`, so each turn or command is its one running task, which
Ctrl-C cancels (interrupt.py); a cancelled turn says `[cancelled]` on its own line
and the prompt comes back. A turn that did not end normally says why, once: an error
has been shown as it happened; a reply cut off by the token limit, or stopped after
too many rounds of tool calls, gets a note. A line's `@` mentions are the core's
(`Session.turn` expands them); one it refuses is printed as an error, nothing is
kept, and the line stays in the input's history. On a terminal, a line typed while a
turn runs steers it (typeahead.py, steering.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

from ... import __version__
from ...agent import CANCELLED, TurnResult
from ...base.errors import AttachmentError
from ...control.live import Live
from ...session import Session
from .interrupt import Interrupts

NOTES = {
    "max_tokens": "[cut off: the reply reached the model's token limit]",
}


class Repl:
    def __init__(
        self,
        session: Session,
        resumed: str | None = None,
        interrupts: Interrupts | None = None,
    ) -> None:
        self.session = session
        self.resumed = resumed  # the title of a resumed session, whose history is redrawn
        self.live = Live(session)
        self.interrupts = interrupts or Interrupts()
        self.code = 0  # the exit code: 130 when Ctrl-C ended a REPL reading a pipe
        self._reading: asyncio.Task[str | None] | None = None

    async def run(self) -> int:
        output = self.session.output
        output.say(f"elelem v{__version__}")
        if self.resumed is not None:
            from .resume import show_history

            await show_history(self.session, self.resumed)
        self.interrupts.turn = self._cancel
        self.interrupts.idle = self._leave
        with self.interrupts.installed():
            while (line := await self._readline()) is not None:
                if not await self.dispatch(line):
                    break
        return self.code

    async def _readline(self) -> str | None:
        self._reading = asyncio.ensure_future(self.session.input.readline("> "))
        try:
            return await self._reading
        except asyncio.CancelledError:
            if self.code and not _cancelling():
                return None  # Ctrl-C while reading a pipe
            raise
        finally:
            self._reading = None

    def _cancel(self) -> bool:
        """Cancel the running turn or command; False when none runs."""
        if not self.live.busy:
            return False
        self.live.cancel()
        return True

    def _leave(self) -> None:
        if self._reading is not None:
            self.code = 130
            self._reading.cancel()

    async def dispatch(self, line: str) -> bool:
        """Run one line; False when it asked to leave."""
        line = line.strip()
        if not line:
            return True
        with self.interrupts.quiet_terminal(self._editing()):
            if line.startswith("/"):
                return await self._command(line)
            try:
                with self._typing_ahead():
                    result = await turn(self.live, line)
            except AttachmentError as exc:
                self.session.output.say(str(exc), "error")
                return True
        output = self.session.output
        if result.stop_reason == "cancelled":
            output.say(CANCELLED, "info")
        elif result.stop_reason == "max_turn_requests":
            output.say(result.reply.rsplit("\n\n", 1)[-1], "info")
        elif note := NOTES.get(result.stop_reason):
            output.say(note, "info")
        return True

    @contextlib.contextmanager
    def _typing_ahead(self) -> Iterator[None]:
        """On a terminal, a line typed while the turn runs steers it (typeahead.py);
        what is left waits at the next prompt."""
        if not self._editing():
            yield
            return
        from .typeahead import TypeAhead

        ahead = TypeAhead(self.session)
        self.session.input.typeahead = ahead  # type: ignore[attr-defined]
        try:
            with ahead.running():
                yield
        finally:
            self.session.input.typeahead = None  # type: ignore[attr-defined]
            self.session.input.editor.typed = ahead.leftover()  # type: ignore[attr-defined]

    def _editing(self) -> bool:
        """Whether the line editor reads the prompts (a line-by-line input keeps the
        terminal as it is during a turn: a question is answered by typing a line)."""
        from .console import TerminalInput

        return isinstance(self.session.input, TerminalInput) and not self.session.input.lines

    async def _command(self, line: str) -> bool:
        try:
            result = await self.live.command(line)
        except asyncio.CancelledError:
            if _cancelling():
                raise  # the REPL itself is being stopped
            self.session.output.say(CANCELLED, "info")
            return True
        kind = "markdown" if line.startswith("/tools") else "plain"
        self.session.output.say(result.output, kind)
        return not result.exit


async def turn(live: Live, prompt: str) -> TurnResult:
    """`live.turn` in a task of its own: Ctrl-C (`live.cancel`) ends the turn only, but
    a cancel of the caller itself (the face being stopped) still goes on up."""
    result = await asyncio.ensure_future(live.turn(prompt))
    if _cancelling():
        raise asyncio.CancelledError
    return result


def _cancelling() -> bool:
    me = asyncio.current_task()
    return me is not None and me.cancelling() > 0
