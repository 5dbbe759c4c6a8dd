"""`elelem chat` (the REPL) and `elelem ask` (one prompt, one reply) in the terminal.

A folder with plugins, rules or MCP servers of its own that is not trusted yet is
asked about once, before anything of it loads (`Trust the plugins and rules in
/path? [y/N]`, on a terminal: stdin a tty); a yes is kept in the trusted-folders file
(trust.py), a no (or no terminal to ask on) leaves them out and says so on stderr.
`--no-project-plugins` leaves them out without asking.

SIGTERM or SIGHUP (a closed terminal) cancel what runs, as in every face
(`signals.on_signals`): the turn is cancelled and kept as `...[cancelled]`, its tools
are killed, the session is closed, and the process exits 128 + N at once
(`signals.leave`: the thread reading the terminal cannot hold the exit up).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from ...commands import Commands
from ...config import choose_provider
from ...errors import ElelemError
from ...io import Input, Output
from ...plugins import core_registry
from ...registry import Registry
from ...session import MakeIo, Session, resume, start
from ...signals import leave, on_signals
from ...store.store import Store
from .console import TerminalInput, TerminalOutput
from .repl import Repl
from .resume import choose, pick


def console(keep_stdout: bool) -> MakeIo:
    """The terminal's Input and Output, unless a plugin replaced them; with
    `keep_stdout` (`elelem ask` piped), everything but the reply goes to stderr."""

    def make(registry: Registry, commands: Commands) -> tuple[Input, Output]:
        if keep_stdout:
            output: Output = TerminalOutput(stream=sys.stderr, color=False)
        else:
            output = (registry.output_factory_of() or TerminalOutput)()
        input = (registry.input_factory_of() or TerminalInput)(commands=commands)
        return input, output

    return make


async def terminal(options: argparse.Namespace, store: Store) -> int:
    """Run `chat` or `ask`; after a SIGTERM or SIGHUP, once all is cleaned up, exit."""
    main, caught = asyncio.current_task(), []

    def stop(code: int) -> None:
        caught.append(code)
        if main is not None:
            main.cancel()  # the turn's tools are killed as it unwinds

    remove = on_signals(stop)
    try:
        return await _terminal(options, store)
    except asyncio.CancelledError:
        if not caught:
            raise
    finally:
        remove()
    leave(caught[0])


async def _terminal(options: argparse.Namespace, store: Store) -> int:
    ask = options.command == "ask"
    keep_stdout = ask and not sys.stdout.isatty()
    saving = None if options.no_save else store
    picking = getattr(options, "pick", False)
    resuming = picking or getattr(options, "resume", None) is not None
    title = None
    try:
        make_io = console(keep_stdout)
        if resuming:
            stored = choose(store) if picking else pick(store, options.resume, Path.cwd())
            title = stored.title
            where = Path(stored.cwd) if Path(stored.cwd).is_dir() else Path.cwd()
            project = await trusted(where, options.no_project_plugins)
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
            project = await trusted(Path.cwd(), options.no_project_plugins)
            session = start(
                core_registry(), provider, model, project=project, make_io=make_io, store=saving
            )
    except ElelemError as exc:
        print(f"elelem: {exc}", file=sys.stderr)
        return 1
    try:
        if not ask:
            await Repl(session, title).run()
            return 0
        return await ask_once(session, options.prompt, keep_stdout)
    finally:
        await session.close()


async def trusted(cwd: Path, refused: bool) -> bool:
    """Whether the folder's plugins and rules load: trusted already, or the user says
    yes now (kept). Asked only on a terminal, and only when there is something to trust."""
    from ...errors import TrustNotKept
    from ...trust import decide, question, remember

    trust = decide(cwd)
    if trust.trusted or refused or not trust.skipped:
        return trust.trusted and not refused
    if sys.stdin.isatty():
        answer = await asyncio.to_thread(_ask, f"{question(trust.folder)} [y/N] ")
        if answer.strip().lower() in ("y", "yes"):
            try:
                remember(trust.folder)
                return True
            except TrustNotKept as exc:  # a link planted in its place: trust nothing
                print(f"elelem: {exc}", file=sys.stderr, flush=True)
    print(f"elelem: {trust.notice()}", file=sys.stderr, flush=True)
    return False


def _ask(prompt: str) -> str:
    from .console import visible  # shown, not obeyed; on stderr: stdout may be a reply

    print(visible(prompt), end="", file=sys.stderr, flush=True)
    return sys.stdin.readline()


async def ask_once(session: Session, words: list[str], print_reply: bool) -> int:
    result = await session.turn(ask_prompt(words))
    if not result.reply.strip():
        print("elelem: no reply", file=sys.stderr)
        return 1
    if print_reply:
        from .console import visible

        print(visible(result.reply))  # shown, not obeyed: a pipe may end at a terminal
    return 0


def ask_prompt(words: list[str]) -> str:
    prompt = " ".join(words)
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped:
            prompt += f"\n\n```\n{piped}\n```"
    return prompt
