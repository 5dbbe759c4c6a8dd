"""`elelem chat` (the REPL) and `elelem ask` (one prompt, one reply) in the terminal.

`elelem ask` exits 0 when the turn ended normally, 1 when it ended in an error (the
`Error: ...` line goes to stderr) or gave no reply, 130 when Ctrl-C cancelled it. Its
prompt is the words given, then piped stdin as a fenced block; or stdin alone when no
words are given (`echo q | elelem ask`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ...commands import Commands
from ...config import choose_provider
from ...errors import ElelemError
from ...io import Input, Output
from ...live import Live
from ...plugins import core_registry
from ...registry import Registry
from ...session import MakeIo, Session, resume, start
from ...store.store import Store
from .console import TerminalInput, TerminalOutput
from .interrupt import Interrupts
from .repl import Repl, turn
from .resume import choose, pick


def console(keep_stdout: bool, ask: bool = False, lines: bool = False) -> MakeIo:
    """The terminal's Input and Output, unless a plugin replaced them; with
    `keep_stdout` (`elelem ask` piped), everything but the reply goes to stderr; with
    `ask`, errors go to stderr; with `lines`, input is read line by line."""

    def make(registry: Registry, commands: Commands) -> tuple[Input, Output]:
        if keep_stdout:
            output: Output = TerminalOutput(stream=sys.stderr, color=False)
        elif ask:
            output = TerminalOutput(errors=sys.stderr)
        else:
            output = (registry.output_factory_of() or TerminalOutput)()
        factory = registry.input_factory_of()
        if factory is not None:
            return factory(commands=commands), output
        return TerminalInput(commands=commands, lines=lines), output

    return make


async def terminal(options: argparse.Namespace, store: Store) -> int:
    ask = options.command == "ask"
    keep_stdout = ask and not sys.stdout.isatty()
    saving = None if options.no_save else store
    picking = getattr(options, "pick", False)
    resuming = picking or getattr(options, "resume", None) is not None
    lines = getattr(options, "input", None) == "-"
    title = None
    try:
        prompt = ask_prompt(options.prompt) if ask else ""
        project, make_io = not options.no_project_plugins, console(keep_stdout, ask, lines)
        if resuming:
            stored = (
                choose(store, _first_line) if picking else pick(store, options.resume, Path.cwd())
            )
            title = stored.title
            session = resume(
                core_registry(),
                saving,
                stored,
                options.provider,
                options.model,
                project=project,
                make_io=make_io,
            )
        else:
            provider, model = choose_provider(
                face_provider=options.provider, face_model=options.model
            )
            session = start(
                core_registry(), provider, model, project=project, make_io=make_io, store=saving
            )
    except ElelemError as exc:
        print(f"elelem: {exc}", file=sys.stderr)
        return 1
    interrupts = Interrupts()
    try:
        if not ask:
            repl = Repl(session, title, interrupts)
            attach(session, interrupts, repl)
            return await repl.run()
        attach(session, interrupts)
        return await ask_once(session, prompt, keep_stdout, interrupts)
    finally:
        await session.close()


def attach(session: Session, interrupts: Interrupts, repl: Repl | None = None) -> None:
    """Give the terminal's Input what its line editor shows and where Ctrl-C goes."""
    if not isinstance(session.input, TerminalInput):
        return
    if session.input.lines:  # no line editor: nor its libraries (start-up time)
        session.input.attach(output=session.output, interrupts=interrupts, cwd=session.cwd)
        return
    from .editor import status_text
    from .history import history_file

    session.input.attach(
        output=session.output,
        interrupts=interrupts,
        cwd=session.cwd,
        history=history_file(session.cwd),
        status=lambda: status_text(session, repl.mode if repl else None),
    )


async def ask_once(session: Session, prompt: str, print_reply: bool, interrupts: Interrupts) -> int:
    live = Live(session)

    def cancel() -> bool:
        live.cancel()
        return live.busy

    interrupts.turn = cancel
    with interrupts.installed():
        result = await turn(live, prompt)
    if result.stop_reason == "cancelled":
        session.output.say("[cancelled]", "info")
        return 130
    if result.stop_reason == "error":
        return 1  # the Output said `Error: ...` on stderr, once
    if not result.reply.strip():
        print("elelem: no reply", file=sys.stderr)
        return 1
    if print_reply:
        print(result.reply)
    if result.stop_reason == "max_tokens":
        print("elelem: the reply was cut off at the model's token limit", file=sys.stderr)
    return 0


def ask_prompt(words: list[str]) -> str:
    """The words, then piped stdin fenced; or stdin alone when there are no words."""
    prompt = " ".join(words)
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped and prompt:
            prompt += f"\n\n```\n{piped}\n```"
        elif piped:
            prompt = piped.strip("\n")
    if not prompt.strip():
        raise ElelemError("ask: no prompt: give it as words, or pipe it on stdin")
    return prompt


def _first_line(prompt: str) -> str:
    from .lines import first_line

    return first_line(prompt)
