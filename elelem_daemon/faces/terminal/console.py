"""The terminal's Output and Input: tool lines in colour, thinking dimmed, replies as
Markdown; lines read from stdin with completion, questions asked on the same terminal."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, TextIO

from ...commands import Commands
from ...io import NullInput, NullOutput
from ...result import Result

DIM = "\033[2;3m"
CYAN = "\033[36m"
YELLOW = "\033[33m"
RED = "\033[31m"
GREEN = "\033[32m"
RESET = "\033[0m"


class TerminalOutput(NullOutput):
    """The terminal: tool lines in colour, thinking dimmed, replies as Markdown.

    `progress` takes everything but the replies, so `elelem ask` can keep stdout clean.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        progress: TextIO | None = None,
        color: bool | None = None,
    ) -> None:
        self.stream = stream or sys.stdout
        self.progress = progress or self.stream
        self.color = self.stream.isatty() if color is None else color
        self._thinking = False

    def _paint(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _line(self, text: str) -> None:
        self._end_thinking()
        print(text, file=self.progress, flush=True)

    def _end_thinking(self) -> None:
        if self._thinking:
            self._thinking = False
            print(file=self.progress, flush=True)

    def say(self, text: str, kind: str = "plain") -> None:
        if not text or not text.strip():
            return
        if kind == "error":
            self._line(self._paint(RED, f"error: {text}"))
        elif kind == "markdown":
            self._markdown(text, self.progress)
        else:
            self._line(text)

    def thinking(self, text: str) -> None:
        self._thinking = True
        print(self._paint(DIM, text), end="", file=self.progress, flush=True)

    def reply(self, text: str) -> None:
        if text.strip():
            self._markdown(text, self.stream)

    def doing(self, call: dict[str, Any]) -> None:
        name = call["name"]
        args = json.dumps(call.get("arguments", {}), ensure_ascii=False)
        colour = YELLOW if name.endswith("?") else CYAN
        self._line(f"+ {self._paint(colour, name)}({args})")

    def result(self, call: dict[str, Any], result: Result) -> None:
        if not result.ok:
            self._line(self._paint(RED, f"  ! {result.error}"))

    def _markdown(self, text: str, stream: TextIO) -> None:
        self._end_thinking()
        if not self.color:
            print(text, file=stream, flush=True)
            return
        from rich.console import Console  # deferred: start-up time
        from rich.markdown import Markdown

        Console(file=stream, force_terminal=True).print(Markdown(text))


def painted_diff(diff: str, color: bool) -> str:
    """A unified diff with added lines green, removed red and hunk headers cyan."""
    if not color:
        return diff
    lines = []
    for line in diff.split("\n"):
        if line.startswith(("+++", "---")):
            lines.append(line)
        elif line.startswith("+"):
            lines.append(f"{GREEN}{line}{RESET}")
        elif line.startswith("-"):
            lines.append(f"{RED}{line}{RESET}")
        elif line.startswith("@@"):
            lines.append(f"{CYAN}{line}{RESET}")
        else:
            lines.append(line)
    return "\n".join(lines)


def _tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


class TerminalInput(NullInput):
    """The terminal: reads lines from stdin; asks questions on the same terminal. It
    reviews changes hunk by hunk (`reviews`; review.py, for questions of kind `review`)."""

    reviews = True

    def __init__(self, commands: Commands | None = None, stream: TextIO | None = None) -> None:
        super().__init__(commands=commands)
        self.stream = stream or sys.stdin

    async def readline(self, prompt: str = "> ") -> str | None:
        return await asyncio.to_thread(self._read, prompt)

    async def ask(
        self, prompt: str, options: list[str] | None = None, **details: Any
    ) -> str | None:
        if details.get("kind") == "review":
            from .review import review

            show = lambda text: print(text, flush=True)  # noqa: E731
            return await review(details.get("change") or {}, self.readline, show, _tty())
        diff = (details.get("tool") or {}).get("diff")
        if diff:
            print(painted_diff(diff.rstrip("\n"), sys.stdout.isatty()), flush=True)
        hint = f" [{'/'.join(options)}]" if options else ""
        return await self.readline(f"{prompt}{hint} ")

    def _read(self, prompt: str) -> str | None:
        if self.stream is sys.stdin and sys.stdin.isatty():
            self._complete_with_readline()
            try:
                return input(prompt)
            except EOFError:
                return None
        line = self.stream.readline()
        if not line:
            return None
        line = line.rstrip("\n")
        print(f"{prompt}{line}", flush=True)  # piped input is not echoed: show what was read
        return line

    def _complete_with_readline(self) -> None:
        """Tab completes commands, their arguments and file names (see Commands.complete)."""
        try:
            import readline
        except ImportError:
            return
        commands = self.commands
        if commands is None or readline.get_completer() is not None:
            return

        def completer(text: str, state: int) -> str | None:
            line = readline.get_line_buffer()[: readline.get_endidx()]
            matches = commands.complete(line)
            return matches[state] if state < len(matches) else None

        readline.set_completer_delims(" ")
        readline.set_completer(completer)
        readline.parse_and_bind("tab: complete")
