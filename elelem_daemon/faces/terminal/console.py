"""The terminal's Output and Input.

TerminalOutput draws a turn. On a terminal (rich, screen.py): a spinner with its
elapsed time while the model has said nothing yet; thinking streamed dimmed; the reply
rendered as Markdown while it streams (finished blocks printed for good, the open
block redrawn); a tool call as a header `+ execute(bin/test)`, then the first lines of
its output, folded, and ✓ or ✗ (toolcalls.py), a task's child's indented under its call
(nested.py); an error once, `Error: ...`. Written to
a pipe or a file it is plain lines, streamed as they come. Either way what the model
or a file wrote is made visible first (visible.py): no escape sequence gets through.

TerminalInput reads the REPL's lines and answers questions: with the line editor
(editor.py) on a terminal, line by line otherwise (`-` or a pipe: scripts). A
permission question takes one key (questions.py) and shows the whole command.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ...commands import Commands
from ...io import NullInput, NullOutput
from ...result import Result
from .lines import LineReader
from .toolcalls import KEY, Whole, folded, header, whole
from .visible import visible

if TYPE_CHECKING:
    from .editor import LineEditor
    from .interrupt import Interrupts
    from .markdown import Blocks
    from .screen import Screen

DIM = "\033[2;3m"
CYAN = "\033[36m"
YELLOW = "\033[33m"
RED = "\033[31m"
GREEN = "\033[32m"
RESET = "\033[0m"
PREVIEW = 16384  # characters of an open block drawn as Markdown while it streams


class TerminalOutput(NullOutput):
    """The terminal (see the module docstring). `stream` takes the replies, `progress`
    everything else and `errors` the errors, so `elelem ask` can keep stdout clean and
    send its errors to stderr. `color` (default: whether `stream` is a terminal) draws
    with rich; without it the lines are plain."""

    def __init__(
        self,
        stream: TextIO | None = None,
        progress: TextIO | None = None,
        color: bool | None = None,
        errors: TextIO | None = None,
    ) -> None:
        self.stream = stream or sys.stdout
        self.progress = progress or self.stream
        self.errors = errors or self.progress
        self.color = _isatty(self.stream) if color is None else color
        self.screen: Screen | None = None
        if self.color:
            from .screen import Screen

            self.screen = Screen(self.stream)
        self._thinking = ""  # thinking not yet printed (the open line)
        self._thought = False  # thinking is being shown
        self._reply = False  # a reply is streaming in this fetch
        self._open: Blocks | None = None  # its blocks (on a terminal)
        self._blocks = 0  # blocks of it printed
        self._fetching = False  # between `waiting` and `reply`: the text streams
        self._ended_line = False  # the plain reply's last delta ended its line
        self._running: str | None = None  # the tool running, its spinner's label
        self._labels: dict[str, str] = {}  # each open call's spinner label, by call id
        self.indent = ""  # before each line of a call or a message (a task's child's)
        self.whole = Whole()  # the folded results, whole, for Ctrl-O (toolcalls.py)

    # -- the Output port ------------------------------------------------------------
    def say(self, text: str, kind: str = "plain") -> None:
        if not text or not text.strip():
            return
        self._close()
        self._blocks = 0
        if self.indent and kind != "markdown":
            text = self.indent + text.replace("\n", "\n" + self.indent)
        if kind == "error":
            self._error(
                f"Error: {text}" if not self.indent else f"{self.indent}Error: {text.lstrip()}"
            )
        elif kind == "markdown":
            self._markdown(text)
        elif self.screen is not None:
            self.screen.print(_styled(visible(text), "dim" if kind == "info" else ""))
        else:
            print(visible(text), file=self.progress, flush=True)

    def waiting(self) -> None:
        self._fetching = True
        self._close()
        if self.screen is not None:
            self.screen.spin("waiting for the model")

    def thinking(self, text: str) -> None:
        if self._reply:
            self._end_reply()
        self._thought = True
        if self.screen is None:
            print(visible(text), end="", file=self.progress, flush=True)
            return
        self._thinking += text
        done = self._thinking.rfind("\n") + 1
        if done:
            self.screen.print(_styled(visible(self._thinking[: done - 1]), "dim italic"))
            self._thinking = self._thinking[done:]
        self.screen.show(_styled(visible(self._thinking), "dim italic"))

    def saying(self, text: str) -> None:
        self._end_thinking()
        if self.screen is None:
            self._reply = self._reply or bool(text)
            self._ended_line = text.endswith("\n") if text else self._ended_line
            print(visible(text), end="", file=self.stream, flush=True)
            return
        if self._open is None:
            from .markdown import Blocks

            self._open = Blocks()
        self._reply = True
        finished = self._open.feed(text)
        if finished:
            self._print_block(finished)
        self.screen.show(Preview(self._open) if self._open.open.strip() else None)

    def reply(self, text: str) -> None:
        """One fetch's whole text: it has streamed (a failure was said as an error),
        so this ends it. Called alone (a resumed session redrawn), it renders it."""
        fetching, self._fetching = self._fetching, False
        self._close()
        if not fetching and text.strip():
            self._markdown(text)

    def doing(self, call: dict[str, Any]) -> None:
        self._close()
        line = header(call)
        name, _, rest = line.partition("(")
        if self.screen is None:
            print(f"{self.indent}+ {line}", file=self.progress, flush=True)
            return
        from rich.text import Text

        shown = Text(f"{self.indent}+ ")
        shown.append(name, style="yellow" if name.endswith("?") else "cyan")
        shown.append(f"({rest}")
        self.screen.print(shown)
        self._running = f"running {name}"
        if isinstance(call.get("id"), str):
            self._labels[call["id"]] = self._running
        self.screen.spin(self._running)

    def result(self, call: dict[str, Any], result: Result) -> None:
        self._running = None
        if isinstance(call.get("id"), str):
            self._labels.pop(call["id"], None)
        self._close()
        lines, ok, note = folded(result, key=KEY if self.screen is not None else None)
        if self.screen is not None and lines and lines[-1].startswith("… "):
            self.whole.keep(f"{self.indent}+ {header(call)}", whole(result))
        mark, at = ("✓" if ok else "✗"), self.indent + "  "
        if self.screen is None:
            for line in lines:
                print(f"{at}{line}", file=self.progress, flush=True)
            print(f"{at}{mark} {note}".rstrip(), file=self.progress, flush=True)
            return
        from rich.text import Text

        for line in lines:
            self.screen.print(Text(f"{at}{line}", style="dim"))
        shown = Text(f"{at}{mark}", style="green" if ok else "red")
        if note:
            shown.append(f" {note}", style="red")
        self.screen.print(shown)
        self._blocks = 1  # the reply that follows starts after a blank line

    def open_whole(self) -> None:
        """Ctrl-O at the prompt: the latest folded result whole, then the one before."""
        opened = self.whole.next()
        if opened is None:
            print("  no folded result left to open", file=self.progress, flush=True)
            return
        title, lines = opened
        print(title, file=self.progress)
        for line in lines:
            print(f"  {line}", file=self.progress)
        self.progress.flush()

    def nested(self, call_id: str) -> NullOutput:
        """The Output of the sub-agent that call `call_id` (a `task`) runs
        (builtins/task.py): its calls and messages indented under that call, whose
        spinner comes back after each of theirs (nested.py)."""
        from .nested import TerminalNested

        return TerminalNested(self, self._labels.get(call_id, self._running))

    def spin_again(self, label: str | None) -> None:
        """Show `label`'s spinner again (a task's, once a child call has its result)."""
        self._running = label
        self.resume()

    # -- beyond the port: what the terminal's Input and REPL use -------------------
    def pause(self) -> None:
        """Print what is open and clear the live region (before a question)."""
        self._close()

    def resume(self) -> None:
        """After a question: the running tool's spinner again."""
        if self.screen is not None and self._running is not None:
            self.screen.spin(self._running)

    # -- drawing ----------------------------------------------------------------------
    def _close(self) -> None:
        self._end_thinking()
        self._end_reply()
        if self.screen is not None:
            self.screen.stop()

    def _end_thinking(self) -> None:
        if not self._thought:
            return
        self._thought = False
        if self.screen is None:
            print(file=self.progress, flush=True)  # the next line starts on its own
            return
        if self._thinking:
            self.screen.print(_styled(visible(self._thinking), "dim italic"))
        self._thinking = ""
        self.screen.show(None)

    def _end_reply(self) -> None:
        if not self._reply:
            return
        self._reply = False
        if self.screen is None:
            if not self._ended_line:
                print(file=self.stream, flush=True)
            return
        rest, self._open = (self._open.open if self._open else ""), None
        self.screen.show(None)
        self._print_block(rest)
        self._blocks = 0

    def _print_block(self, block: str) -> None:
        assert self.screen is not None
        if not block.strip():
            return
        if self._blocks:
            self.screen.print()
        self._blocks += 1
        self.screen.print(_markdown(block))

    def _markdown(self, text: str) -> None:
        if self.screen is None:  # plain lines: a command's bold markers are not shown
            print(BOLD.sub(r"\1", visible(text)), file=self.progress, flush=True)
            return
        self.screen.print(_markdown(text))

    def _error(self, text: str) -> None:
        if self.screen is not None and self.errors is self.stream:
            from rich.text import Text

            self.screen.print(Text(visible(text), style="red"))
            return
        painted = f"{RED}{visible(text)}{RESET}" if _isatty(self.errors) else visible(text)
        print(painted, file=self.errors, flush=True)


class Preview:
    """The open block of a streaming reply, rendered when it is drawn (at most once a
    frame, not once a token); past PREVIEW characters, its tail as plain text."""

    def __init__(self, blocks: Blocks) -> None:
        self.blocks = blocks

    def __rich_console__(self, console: Any, options: Any) -> Any:
        text = self.blocks.open
        if len(text) > PREVIEW:
            yield _styled(visible(text[-PREVIEW:]), "")
        else:
            yield _markdown(text)


def _styled(text: str, style: str) -> Any:
    from rich.text import Text

    return Text(text, style=style)


BOLD = re.compile(r"\*\*([^*\n]+)\*\*")  # `**name**` in a command's Markdown, plain


def _markdown(text: str) -> Any:
    """Markdown of model text: made visible first; links show their address."""
    from rich.markdown import Markdown

    from .screen import Trimmed

    return Trimmed(Markdown(visible(text), hyperlinks=False))


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def painted_diff(diff: str, color: bool) -> str:
    """A unified diff with added lines green, removed red and hunk headers cyan (made
    visible: the diff shows what a file will hold)."""
    diff = visible(diff)
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


class TerminalInput(NullInput):
    """The terminal: the REPL's lines, with the line editor on a terminal (else line by
    line from `stream`); questions on the same terminal. `attach` gives it what the
    line editor shows and where Ctrl-C goes, once the session exists. It reviews changes
    hunk by hunk (`reviews`; review.py, for questions of kind `review`)."""

    reviews = True

    def __init__(
        self,
        commands: Commands | None = None,
        stream: TextIO | None = None,
        lines: bool = False,
        headless: bool = False,
    ) -> None:
        super().__init__(commands=commands)
        self.headless = headless  # `elelem ask` with no terminal: no question can be asked
        self.unanswered: list[str] = []  # the questions it could not ask
        self.stream = stream or sys.stdin
        self.lines = lines or not (
            self.stream is sys.stdin and _isatty(sys.stdin) and _isatty(sys.stdout)
        )
        self.reader = LineReader(self.stream)
        self.output: TerminalOutput | None = None
        self.interrupts: Interrupts | None = None
        self.cwd: Path | None = None
        self.history: Path | None = None
        self.status: Callable[[], str] | None = None
        self.typeahead: Any = None  # typeahead.TypeAhead while a turn runs
        self._editor: LineEditor | None = None

    def attach(
        self,
        output: Any = None,
        interrupts: Interrupts | None = None,
        cwd: Path | None = None,
        history: Path | None = None,
        status: Callable[[], str] | None = None,
    ) -> None:
        self.output = output if isinstance(output, TerminalOutput) else None
        self.interrupts = interrupts
        self.cwd, self.history, self.status = cwd, history, status

    @property
    def editor(self) -> LineEditor:
        if self._editor is None:
            from .editor import LineEditor

            output = self.output
            self._editor = LineEditor(
                self.commands or Commands(),
                self.cwd,
                self.history,
                self.status,
                self.interrupts,
                output.open_whole if output is not None else None,
            )
        return self._editor

    async def edit(self, text: str, name: str = "text") -> str | None:
        """`text` in `$EDITOR` (edit_text.py): what was saved, or None."""
        from .edit_text import edit_text

        if self.output is not None:
            self.output.pause()
        return await edit_text(text, name, self.output)

    async def shell(self) -> str | None:
        """`/shell`: `$SHELL` under `script` (shell_session.py); its transcript."""
        from .shell_session import run_shell

        if self.lines:  # a pipe or a script: there is no terminal to lend the shell
            if self.output is not None:
                self.output.say("/shell needs a terminal (stdin and stdout)", "error")
            return None
        if self.output is not None:
            self.output.pause()
        return await run_shell(self.output)

    async def readline(self, prompt: str = "> ") -> str | None:
        if self.lines:
            return await self._read_line(prompt)
        return await self.editor.read(prompt)

    async def ask(
        self, prompt: str, options: list[str] | None = None, **details: Any
    ) -> str | None:
        if self.headless:
            await self._cannot_ask(prompt, details)
            return None
        if self.output is not None:
            self.output.pause()
        if self.typeahead is not None:  # the question reads the terminal, not the steers
            with self.typeahead.paused():
                return await self._ask(prompt, options, details)
        return await self._ask(prompt, options, details)

    async def _ask(self, prompt: str, options: list[str] | None, details: Any) -> str | None:
        from . import questions

        if details.get("kind") == "review":
            from .review import review

            read = self._read_line if self.lines else questions.line_on_terminal
            show = lambda text: print(text, flush=True)  # noqa: E731
            change = details.get("change") or {}
            answer = await review(change, read, show, _isatty(sys.stdout))
        else:
            diff = (details.get("tool") or {}).get("diff")
            if diff:
                print(painted_diff(diff.rstrip("\n"), _isatty(sys.stdout)), flush=True)
            if self.lines:
                answer = await questions.by_line(self._read_line, prompt, options, details)
            else:
                answer = await questions.on_terminal(prompt, options, details)
        if answer is None and self.interrupts is not None and not self.lines:
            self.interrupts.cancel_turn()  # Ctrl-C at a question: no answer, and stop
            await asyncio.sleep(0)  # the turn asking runs in this task: its cancel lands
            # here, before the tool's "no answer" goes on to the model
        elif self.output is not None:
            self.output.resume()
        return answer

    async def _cannot_ask(self, prompt: str, details: dict[str, Any]) -> None:
        """Headless: the question on stderr with how to answer it ahead, and the turn
        stops there (`elelem ask` then exits 3)."""
        self.unanswered.append(prompt)
        print(f"elelem: needs approval, and there is no terminal to ask on: {visible(prompt)}",
              file=sys.stderr, flush=True)  # fmt: skip
        tool = details.get("tool") or {}
        if isinstance(details.get("held"), str):  # no --allow with a pattern covers it
            print(f"elelem: {visible(details['held'])}", file=sys.stderr, flush=True)
        elif details.get("kind") == "permission" and isinstance(tool.get("name"), str):
            args = tool.get("arguments") or {}
            subject = args.get("command") or args.get("path")
            pattern = f"{tool['name']}:{subject}" if isinstance(subject, str) else tool["name"]
            print(f"elelem: to allow it ahead: --allow {shlex.quote(visible(pattern))}",
                  file=sys.stderr, flush=True)  # fmt: skip
        if self.interrupts is not None:
            self.interrupts.cancel_turn()
            await asyncio.sleep(0)  # the cancel lands here, before the turn goes on
        return None

    async def _read_line(self, prompt: str) -> str | None:
        typed = _isatty(self.stream)  # a terminal echoes what is typed; a pipe does not
        if typed:
            print(visible(prompt), end="", flush=True)
        line = await self.reader.readline()
        if line is None:
            if typed:
                print(flush=True)
            return None
        if not typed:
            print(f"{visible(prompt)}{visible(line)}", flush=True)  # show what was read
        return line
