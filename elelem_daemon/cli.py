"""The launcher: `elelem chat`, `elelem ask`, `elelem sessions`, `elelem trust
[--user-files]`, `elelem daemon [--acp]`, `elelem login`, `elelem logout`.

It parses the command line, builds the one Store of the process and hands both to a
face. It is the only module besides the package's `__init__` that may import every
face (tests/test_layers.py): each face is imported inside the function that starts it,
so a face's start-up pays for no other.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from . import __version__
from .base import keys

COMMANDS = ("chat", "ask", "daemon", "sessions", "trust", "login", "logout", "help")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="elelem", description="A coding agent.")
    top.add_argument("--version", action="version", version=f"elelem v{__version__}")
    top.add_argument("--login", action="store_true", help=argparse.SUPPRESS)  # ACP terminal auth
    sub = top.add_subparsers(dest="command")
    for name, about in (
        ("chat", "talk with the agent in the terminal (the default)"),
        ("ask", "one prompt, one reply (piped stdin is appended)"),
        ("daemon", "serve JSON-RPC on stdin/stdout for editors"),
    ):
        cmd = sub.add_parser(name, help=about)
        cmd.add_argument("-p", "--provider", help="provider name (default: see README)")
        cmd.add_argument("-m", "--model", help="model name, overriding the provider's default")
        cmd.add_argument("--log-level", help="debug, info, warning or error")
        if name == "daemon":
            cmd.add_argument(
                "--acp",
                action="store_true",
                help="speak the Agent Client Protocol (Zed, codecompanion.nvim, avante.nvim)",
            )
            cmd.add_argument(  # ACP terminal auth may append its args to the agent's command
                "--login", action="store_true", help="sign in instead (as `elelem login`)"
            )
            cmd.add_argument(
                "--max-frame",
                type=frame_limit,
                metavar="BYTES",
                help="largest message body accepted (default: ELELEM_MAX_FRAME, else 64 MiB)",
            )
        else:
            cmd.add_argument(
                "--no-project-plugins",
                action="store_true",
                help="do not load .agents/plugins from this project",
            )
        if name != "daemon":
            for flag, rule in (("--allow", "allow"), ("--deny", "deny")):
                cmd.add_argument(
                    flag,
                    action="append",
                    default=[],
                    type=rule_flag(rule),
                    metavar="TOOL[:SUBJECT]",
                    help=f"{rule} these calls without asking (`execute:pytest*`, `write`); "
                    "repeatable; a --deny wins over an --allow (docs/permissions.md)",
                )
            cmd.add_argument(
                "--no-save",
                action="store_true",
                help="do not store this session (see `elelem sessions`)",
            )
        if name == "chat":
            cmd.add_argument(
                "--resume",
                nargs="?",
                const="",
                metavar="ID",
                help="continue a stored session (default: the latest in this folder)",
            )
            cmd.add_argument(
                "--pick", action="store_true", help="choose a stored session to continue"
            )
            cmd.add_argument(
                "input",
                nargs="?",
                choices=["-"],
                help="`-`: read prompts line by line from stdin, even from a terminal",
            )
        if name == "ask":
            cmd.add_argument("prompt", nargs="*", help="the prompt (default: stdin)")
    stored = sub.add_parser("sessions", help="list stored sessions, most recent first")
    stored.add_argument("--here", action="store_true", help="only sessions in this folder")
    stored.add_argument("--json", action="store_true", help="one JSON object per line")
    stored.add_argument("--delete", metavar="ID", help="delete a stored session")
    trust = sub.add_parser(
        "trust", help="trust a folder's own plugins, rules and MCP servers (every face)"
    )
    trust.add_argument("folder", nargs="?", default=".", help="the folder (default: here)")
    trust.add_argument(
        "--user-files",
        action="store_true",
        help="load your own plugins, skills, modes, rules and MCP servers held as new or "
        "changed (asks on a terminal)",
    )
    sub.add_parser("login", help="sign in to a model provider (kept for elelem alone)")
    sub.add_parser("logout", help="forget the sign-in of `elelem login`")
    sub.add_parser("help", help="show this help")
    return top


def trust_folder(folder: str) -> int:
    """`elelem trust [FOLDER]`: the user's word from the command line, kept in the
    trusted-folders file (trust.py); says what sessions there will load."""
    from .base.errors import TrustNotKept
    from .safety.trust import decide, remember
    from .safety.trust_list import visible

    if not os.path.isdir(folder):
        print(f"elelem: {folder} is not a folder", file=sys.stderr)
        return 2
    trust = decide(folder)
    try:
        kept = remember(trust.folder)
    except TrustNotKept as exc:
        print(f"elelem: {exc}", file=sys.stderr)
        return 1
    print(visible(f"Trusted {trust.folder} (kept in {kept})."))
    if trust.loads:
        print("Sessions there load:")
        for line in trust.listing().splitlines():
            print(visible(line))
    return 0


def trust_user_files() -> int:
    """`elelem trust --user-files`: lists the user's files held as new or changed
    (safety/vetted.py) and, on a terminal only, asks to load them from now on: a
    command the agent runs has no terminal, so it cannot confirm them itself."""
    from .safety import vetted

    files = vetted.held()
    if not files:
        print("No file of yours is held.")
        return 0
    text, _, last = vetted.question(files).rpartition("\n")
    print(text, file=sys.stderr)  # each line's control characters escaped (vetted.py)
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        print("elelem: not confirmed: run this in a terminal to answer", file=sys.stderr)
        return 1
    print(f"{last} [y/N] ", end="", file=sys.stderr, flush=True)
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        print("Nothing loaded.", file=sys.stderr)
        return 1
    vetted.approve(files)
    print(f"Approved {len(files)} file(s): sessions load them from now on.")
    return 0


def frame_limit(text: str) -> int:
    """A frame limit in bytes: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of bytes, got {text!r}")
    return value


def rule_flag(rule: str) -> Callable[[str], tuple[str, str]]:
    """`--allow PATTERN` and `--deny PATTERN`: a permission rule, checked as the
    rules' own grammar is (builtins/permissions.py)."""

    def parse(pattern: str) -> tuple[str, str]:
        from .builtins.permissions import rule_of

        try:
            rule_of(pattern, rule, "command line")
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return pattern, rule

    return parse


def main(argv: Sequence[str] | None = None) -> int:
    keys.take()  # first of all: the keys leave the environment (elelem_daemon/base/keys.py)
    args = list(sys.argv[1:] if argv is None else argv)
    if args and not args[0].startswith("-") and args[0] not in COMMANDS:
        print(f"Unknown command: {args[0]}", file=sys.stderr)
        return 1
    options = parser().parse_args(args or ["chat"])
    if options.command is None and options.login:
        options.command = "login"
    if options.command in (None, "help"):
        parser().print_help()
        return 0
    if options.command == "trust":
        if options.user_files:
            return trust_user_files()
        return trust_folder(options.folder)
    if options.command == "login" or getattr(options, "login", False):
        from .faces.terminal.login import login
        from .providers.check import check

        return login(check)
    if options.command == "logout":
        from .faces.terminal.login import logout

        return logout()
    if options.command == "daemon" and not options.acp:
        from .processes.signals import until_loop

        until_loop()  # until the daemon's own handlers take over (stdio.run)
    elif options.command == "ask" or options.command == "daemon":  # `ask`, `daemon --acp`
        from .processes.signals import SIGNALS, until_loop

        until_loop(SIGNALS)  # until the face's own handlers; Ctrl-C stays Python's
    from .base.log import setup
    from .store.store import Store

    level = getattr(options, "log_level", None)
    if options.command in ("chat", "ask") and not (level or os.environ.get("ELELEM_LOG_LEVEL")):
        from .base.config import state_dir

        setup(to_file=state_dir() / "elelem.log")  # no log line in the middle of a reply
    else:
        setup(level, queued=options.command == "daemon")
    store = Store()  # the one of this process, whichever face runs
    if options.command == "sessions":
        from .faces.terminal.resume import stored_sessions

        return stored_sessions(options, store)
    if options.command == "daemon":
        max_frame = options.max_frame  # both editor faces: the largest message they take
        if max_frame is None and os.environ.get("ELELEM_MAX_FRAME"):
            try:
                max_frame = frame_limit(os.environ["ELELEM_MAX_FRAME"])
            except argparse.ArgumentTypeError as exc:
                print(f"elelem: ELELEM_MAX_FRAME: {exc}", file=sys.stderr)
                return 2
        if options.acp:
            from .faces.acp import serve as serve_acp

            return serve_acp(store, options.provider, options.model, max_frame)
        from .faces.daemon.stdio import serve

        return serve(store, options.provider, options.model, max_frame)
    import asyncio

    from .faces.terminal.chat import terminal

    try:
        code = asyncio.run(terminal(options, store))  # a signal: exits 128 + N in there
    except KeyboardInterrupt:
        return 130
    if options.command == "ask":
        from .processes.signals import finish

        return finish(code)  # no interpreter teardown for a one-shot (signals.py)
    return code
