"""LineEditor: the REPL's prompt on a terminal, built on prompt_toolkit.

- History per project (history.py), Up/Down and Ctrl-R to search it.
- Tab completes with the core's one completer, `Commands.complete`: slash commands
  and their arguments on the first line, file paths (and `@` mentions) anywhere;
  the menu opens by itself while a slash command is typed.
- Multi-line input: Alt-Enter (Esc then Enter) adds a line, and so does Enter after a
  trailing `\\`.
- The bottom status line says provider · model · tokens of the last turn · context,
  and the mode when it is not `build` (`status_text`, plan.py).
- Ctrl-C clears the line; a second one within a second leaves (interrupt.py). Ctrl-D
  on an empty line leaves. Leaving, `read` returns None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings

from ...commands import Commands
from ...turns.usage import status
from .history import ProjectHistory
from .interrupt import WINDOW, Interrupts
from .visible import visible_line

if TYPE_CHECKING:
    from ...session import Session

AGAIN_TO_LEAVE = "Ctrl-C again to leave"


class CommandCompleter(Completer):
    """prompt_toolkit's view of `Commands.complete` (the one completer)."""

    def __init__(self, commands: Commands, cwd: Path | None = None) -> None:
        self.commands = commands
        self.cwd = cwd

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        line = document.current_line_before_cursor
        if document.cursor_position_row > 0:
            line = " " + line  # a later line of the prompt holds no command
        if line.startswith("/"):
            name, space, partial = line[1:].partition(" ")
            word = partial if space else line
        else:
            word = line.rsplit(" ", 1)[-1]
        for candidate in self.commands.complete(line, self.cwd):
            yield Completion(candidate, start_position=-len(word))


def status_text(session: Session, mode: str | None = None) -> str:
    """`provider · model · 12.3k/200k ctx (6%) · 530 in (480 cached), 9 out · $0.0123 ·
    4 messages` (then the mode, when set): turns/usage.py says the middle."""
    parts = [session.provider_name, str(session.answering or "default"), *status(session.usage)]
    count = len(session.conversation)
    parts.append(f"{count} message{'' if count == 1 else 's'}")
    if mode:
        parts.append(mode)
    return " · ".join(visible_line(part) for part in parts)


class LineEditor:
    def __init__(
        self,
        commands: Commands,
        cwd: Path | None = None,
        history: Path | None = None,
        status: Callable[[], str] | None = None,
        interrupts: Interrupts | None = None,
        open_whole: Callable[[], None] | None = None,
    ) -> None:
        self.interrupts = interrupts or Interrupts()
        self.status = status
        self.open_whole = open_whole  # Ctrl-O: a folded result, whole (toolcalls.py)
        self.typed = ""  # the next prompt's starting text (typeahead.py's leftover)
        kept: History = ProjectHistory(history) if history is not None else InMemoryHistory()
        self.session: PromptSession[str] = PromptSession(
            history=kept,
            completer=CommandCompleter(commands, cwd),
            complete_while_typing=Condition(self._typing_a_command),
            key_bindings=self._bindings(),
            bottom_toolbar=self._toolbar,
            prompt_continuation=lambda width, line, wrap: "." * (width - 1) + " ",
            enable_history_search=False,
            search_ignore_case=True,
        )

    async def read(self, prompt: str = "> ") -> str | None:
        typed, self.typed = self.typed, ""  # what was typed during the turn and not sent
        try:
            return await self.session.prompt_async(
                FormattedText([("bold", prompt)]), handle_sigint=False, default=typed
            )
        except (EOFError, KeyboardInterrupt):
            print(flush=True)  # the shell's prompt starts on a line of its own
            return None

    def _typing_a_command(self) -> bool:
        text = self.session.default_buffer.text
        return text.startswith("/") and " " not in text

    def _toolbar(self) -> Any:
        if self.interrupts.hinting():
            return FormattedText([("bold", f" {AGAIN_TO_LEAVE} ")])
        return f" {self.status()} " if self.status is not None else None

    def _bindings(self) -> KeyBindings:
        bindings = KeyBindings()

        @bindings.add("c-c")
        def _interrupt(event: Any) -> None:
            if self.interrupts.pressed_at_prompt():
                event.app.exit(exception=EOFError())
                return
            event.current_buffer.reset()
            event.app.invalidate()
            loop = event.app.loop
            if loop is not None:  # the hint goes once the second has passed
                loop.call_later(WINDOW + 0.05, event.app.invalidate)

        @bindings.add("c-o")
        def _open_whole(event: Any) -> None:
            if self.open_whole is not None:
                from prompt_toolkit.application import run_in_terminal

                run_in_terminal(self.open_whole)

        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("enter", filter=Condition(self._continued))
        def _continue(event: Any) -> None:
            buffer = event.current_buffer
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")

        return bindings

    def _continued(self) -> bool:
        """Enter after a trailing backslash continues the prompt on a new line."""
        buffer = self.session.default_buffer
        return buffer.document.is_cursor_at_the_end and buffer.text.endswith("\\")
