"""`elelem chat` (the REPL) and `elelem ask` (one prompt, one reply) in the terminal.

`elelem ask` exits 0 when the turn ended normally, 1 when it ended in an error (the
`Error: ...` line goes to stderr) or gave no reply, 130 when Ctrl-C cancelled it, 3
when a question stopped it and there was no terminal to ask on (`--allow` and `--deny`
decide ahead: docs/permissions.md). Its
prompt is the words given, then piped stdin as a fenced block; or stdin alone when no
words are given (`echo q | elelem ask`). A prompt's `@` mentions are resolved by the
core; one it refuses exits 1 with the reason. Like every face's turn, `elelem ask` waits
for MCP servers still starting (at most ELELEM_MCP_FIRST_WAIT, 30 s, once) and says so on
stderr, then goes on without those not ready, naming them; an HTTP server's OAuth URL is
printed, and the approval waited for (at most ELELEM_MCP_TIMEOUT, 30 s).

A folder with plugins, rules or MCP servers of its own that is not trusted yet is
asked about once, before anything of it loads (`Trust the plugins and rules in
/path? [y/N]`, on a terminal: stdin a tty), after the list of what it would load
(trust_list.py: each plugin file, rule, mode and MCP server command); a yes is kept
in the trusted-folders file (trust.py), a no (or no terminal to ask on) leaves them
out and says so on stderr.
`--no-project-plugins` leaves them out without asking.

The user's own files that decide what runs (plugins, skills, modes, rules, MCP servers,
the trusted-folders file), when new or changed since the user approved them
(safety/vetted.py), are held: a terminal asks `Load them? [y/N]` first, listing each;
with no terminal (`elelem ask` piped) they are not loaded, and stderr says to run
`elelem trust --user-files`.

SIGTERM or SIGHUP (a closed terminal) cancel what runs, as in every face
(`signals.on_signals`): the turn is cancelled and kept as `...[cancelled]`, its tools
are killed, the session is closed, and the process exits 128 + N at once
(`signals.leave`: the thread reading the terminal cannot hold the exit up).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
from pathlib import Path
from typing import Any

from ...base.config import choose_provider
from ...base.errors import AttachmentError, ElelemError
from ...commands import Commands
from ...control.live import Live
from ...io import Input, Output
from ...plugins import core_registry
from ...processes.signals import leave, on_signals
from ...registry import Registry
from ...session import MakeIo, Session, resume, start
from ...store.store import Store
from . import plan as terminal_plan
from .console import TerminalInput, TerminalOutput
from .interrupt import Interrupts
from .repl import Repl, turn
from .resume import choose, pick
from .visible import visible

NEEDS_APPROVAL = 3  # `elelem ask`: a question no one could answer stopped the turn


def console(keep_stdout: bool, ask: bool = False, lines: bool = False) -> MakeIo:
    """The terminal's Input and Output, unless a plugin replaced them; with
    `keep_stdout` (`elelem ask` piped), everything but the reply goes to stderr; with
    `ask`, errors go to stderr, and with no terminal on stdin no question is asked
    (headless); with `lines`, input is read line by line."""

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
        headless = ask and not sys.stdin.isatty()
        return TerminalInput(commands=commands, lines=lines, headless=headless), output

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
    lines = getattr(options, "input", None) == "-"
    rules = [*options.allow, *options.deny]  # the last match wins: a --deny over an --allow
    title = None
    try:
        prompt = await ask_prompt(options.prompt) if ask else ""
        make_io = console(keep_stdout, ask, lines)
        if resuming:
            stored = (
                choose(store, _first_line) if picking else pick(store, options.resume, Path.cwd())
            )
            title = stored.title
            where = Path(stored.cwd) if Path(stored.cwd).is_dir() else Path.cwd()
            await confirm_held(lines)
            project = await trusted(where, options.no_project_plugins, lines)
            session = resume(
                core_registry(),
                saving,
                stored,
                options.provider,
                options.model,
                project=project,
                make_io=make_io,
                rules=rules,
            )
        else:
            provider, model = choose_provider(
                face_provider=options.provider, face_model=options.model
            )
            await confirm_held(lines)
            project = await trusted(Path.cwd(), options.no_project_plugins, lines)
            session = start(
                core_registry(),
                provider,
                model,
                project=project,
                make_io=make_io,
                store=saving,
                rules=rules,
            )
    except ElelemError as exc:
        print(f"elelem: {exc}", file=sys.stderr)
        return 1
    mcp = getattr(session, "mcp", None)
    if mcp is not None:  # the browser step of an MCP server's OAuth, printed
        mcp.on_authorize = lambda name, url: session.output.say(
            f"MCP server {name} needs authorization: open {url}", "info"
        )
    interrupts = Interrupts()
    terminal_plan.attach(session)  # each todo list, printed
    try:
        if not ask:
            repl = Repl(session, title, interrupts)
            attach(session, interrupts, repl)
            return await repl.run()
        attach(session, interrupts)
        return await ask_once(session, prompt, keep_stdout, interrupts)
    finally:
        await session.close()


async def trusted(cwd: Path, refused: bool, lines: bool = False) -> bool:
    """Whether the folder's plugins and rules load: trusted already, or the user says
    yes now (kept). Asked only on a terminal, and only when there is something to trust."""
    from ...base.errors import TrustNotKept
    from ...safety.trust import decide, question, remember

    trust = decide(cwd)
    if trust.trusted or refused or not trust.skipped:
        return trust.trusted and not refused
    if sys.stdin.isatty() and not lines:
        loads = f"{trust.folder} has its own code and rules. Trusting it loads:\n{trust.listing()}"
        answer = await asyncio.to_thread(_ask, f"{question(trust.folder)} [y/N] ", loads)
        if answer.strip().lower() in ("y", "yes"):
            try:
                remember(trust.folder)
                return True
            except TrustNotKept as exc:  # a link planted in its place: trust nothing
                print(f"elelem: {exc}", file=sys.stderr, flush=True)
    print(f"elelem: {trust.notice()}", file=sys.stderr, flush=True)
    return False


async def confirm_held(lines: bool = False) -> None:
    """The user's own files new or changed since approved (vetted.py) load only if the
    user says yes now, on a terminal; with none to ask on, one line on stderr says
    which command loads them."""
    from ...safety import vetted

    files = vetted.held()
    if not files:
        return
    if sys.stdin.isatty() and not lines:
        text, _, last = vetted.question(files).rpartition("\n")
        answer = await asyncio.to_thread(_ask, f"{last} [y/N] ", text)
        if answer.strip().lower() in ("y", "yes"):
            vetted.approve(files)
            return
    how = f"run `{vetted.APPROVE}` in a terminal to load them"
    print(f"elelem: {vetted.notice_line(files, how)}", file=sys.stderr, flush=True)


def _ask(prompt: str, before: str = "") -> str:
    """On stderr: stdout may be `elelem ask`'s reply. The folder's name is shown, not
    obeyed; so is each line of what it would load (`before`)."""
    for line in before.splitlines():
        print(visible(line), file=sys.stderr)
    print(visible(prompt), end="", file=sys.stderr, flush=True)
    return sys.stdin.readline()


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
        status=lambda: status_text(session, terminal_plan.shown_mode(session)),
    )


async def ask_once(session: Session, prompt: str, print_reply: bool, interrupts: Interrupts) -> int:
    """One prompt, one reply. MCP servers still starting are waited for a little first
    (manager.first_turn, as every face's turn does), one that waits for the user's
    OAuth approval longer (`wait_for_servers`)."""
    mcp = getattr(session, "mcp", None)
    if mcp is not None:  # said on stderr: what it waits for, and what it goes on without
        await mcp.first_turn(session.output.say)
        if any(s["state"] == "needs-auth" for s in mcp.status()["servers"]):
            await wait_for_servers(mcp, mcp.start_timeout)  # its URL was printed
    live = Live(session, measured=False)  # no context meter to show: no window lookup

    def cancel() -> bool:
        live.cancel()
        return live.busy

    interrupts.turn = cancel
    with interrupts.installed():
        try:
            result = await turn(live, prompt)
        except AttachmentError as exc:
            print(f"elelem: {exc}", file=sys.stderr)
            return 1
    if getattr(session.input, "unanswered", None):
        return NEEDS_APPROVAL  # said on stderr at the question
    if result.stop_reason == "cancelled":
        session.output.say("[cancelled]", "info")
        return 130
    if result.stop_reason == "error":
        return 1  # the Output said `Error: ...` on stderr, once
    if not result.reply.strip():
        print("elelem: no reply", file=sys.stderr)
        return 1
    if print_reply and not _printed(visible(result.reply)):  # shown, not obeyed
        return 141  # the reader left (`| head`): 128 + SIGPIPE, as a shell tool ends
    if result.stop_reason == "max_tokens":
        print("elelem: the reply was cut off at the model's token limit", file=sys.stderr)
    return 0


def _printed(text: str) -> bool:
    """The reply written to stdout and flushed; False when its reader is gone (EPIPE).
    stdout then points at /dev/null, so the exit's own flush says nothing either."""
    try:
        print(text, flush=True)
        return True
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return False


async def ask_prompt(words: list[str]) -> str:
    """The words, then piped stdin fenced; or stdin alone when there are no words. The
    pipe is read in a thread: a writer that never closes it leaves the loop free, so a
    signal still ends `ask` (processes/signals.py)."""
    prompt = " ".join(words)
    if not sys.stdin.isatty():
        piped = await piped_text()
        if piped and prompt:
            prompt += f"\n\n```\n{piped}\n```"
        elif piped:
            prompt = piped.strip("\n")
    if not prompt.strip():
        raise ElelemError("ask: no prompt: give it as words, or pipe it on stdin")
    return prompt


async def piped_text() -> str:
    """All of stdin, read by a daemon thread (one that never ends holds no exit up:
    signals.finish) while the loop waits."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            text: str | BaseException = sys.stdin.read()
        except BaseException as exc:  # handed to the loop, raised there
            text = exc
        try:
            loop.call_soon_threadsafe(settle, text)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    def settle(text: str | BaseException) -> None:
        if done.done():
            return
        if isinstance(text, BaseException):
            done.set_exception(text)
        else:
            done.set_result(text)

    threading.Thread(target=read, name="elelem-stdin", daemon=True).start()
    return await done


def _first_line(prompt: str) -> str:
    from .lines import first_line

    return first_line(prompt)


async def wait_for_servers(mcp: Any, timeout: float) -> bool:
    """Until every server is ready or has failed, one that waits for the user's OAuth
    authorization included (its URL was printed): False after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while await mcp.ready(max(0.0, deadline - loop.time())):
        if all(s["state"] != "needs-auth" for s in mcp.status()["servers"]):
            return True
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.1)
    return False
