"""The command line: `elelem chat`, `elelem ask`, `elelem daemon`."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__

COMMANDS = ("chat", "ask", "daemon", "sessions", "help")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="elelem", description="A coding agent.")
    top.add_argument("--version", action="version", version=f"elelem v{__version__}")
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
        if name == "ask":
            cmd.add_argument("prompt", nargs="+")
    stored = sub.add_parser("sessions", help="list stored sessions, most recent first")
    stored.add_argument("--here", action="store_true", help="only sessions in this folder")
    stored.add_argument("--json", action="store_true", help="one JSON object per line")
    stored.add_argument("--delete", metavar="ID", help="delete a stored session")
    sub.add_parser("help", help="show this help")
    return top


def frame_limit(text: str) -> int:
    """A frame limit in bytes: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of bytes, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and not args[0].startswith("-") and args[0] not in COMMANDS:
        print(f"Unknown command: {args[0]}", file=sys.stderr)
        return 1
    options = parser().parse_args(args or ["chat"])
    if options.command in (None, "help"):
        parser().print_help()
        return 0
    from .log import setup

    setup(getattr(options, "log_level", None))
    if options.command == "sessions":
        return stored_sessions(options)
    if options.command == "daemon" and options.acp:
        from .faces.acp import serve as serve_acp

        return serve_acp(provider=options.provider, model=options.model)
    if options.command == "daemon":
        from .faces.daemon.stdio import serve

        max_frame = options.max_frame
        if max_frame is None and os.environ.get("ELELEM_MAX_FRAME"):
            try:
                max_frame = frame_limit(os.environ["ELELEM_MAX_FRAME"])
            except argparse.ArgumentTypeError as exc:
                print(f"elelem: ELELEM_MAX_FRAME: {exc}", file=sys.stderr)
                return 2
        return serve(provider=options.provider, model=options.model, max_frame=max_frame)
    try:
        return asyncio.run(terminal(options))
    except KeyboardInterrupt:
        return 130


async def terminal(options: argparse.Namespace) -> int:
    from .config import default_provider
    from .errors import ElelemError
    from .faces.terminal.repl import Repl
    from .faces.terminal.resume import choose, pick
    from .io import Output
    from .plugins import core_registry
    from .session import resume, start
    from .store.store import Store

    ask = options.command == "ask"
    output = None
    if ask and not sys.stdout.isatty():  # keep stdout for the reply alone
        output = Output(stream=sys.stderr, color=False)
    store = None if options.no_save else Store()
    picking = getattr(options, "pick", False)
    resuming = picking or getattr(options, "resume", None) is not None
    try:
        common = dict(output=output, project=not options.no_project_plugins, terminal=True)
        if resuming:
            if picking:
                stored = choose(Store())
            else:
                stored = pick(Store(), options.resume, Path.cwd())
            session = resume(
                core_registry(), store, stored, options.provider, options.model, **common
            )
        else:
            session = start(
                core_registry(),
                options.provider or default_provider(),
                options.model,
                store=store,
                **common,
            )
    except ElelemError as exc:
        print(f"elelem: {exc}", file=sys.stderr)
        return 1
    try:
        if not ask:
            await Repl(session, stored.title if resuming else None).run()
            return 0
        return await ask_once(session, options.prompt, output is not None)
    finally:
        session.close()


async def ask_once(session: Any, words: list[str], print_reply: bool) -> int:
    reply = await session.turn(ask_prompt(words))
    if not reply.strip():
        print("elelem: no reply", file=sys.stderr)
        return 1
    if print_reply:
        print(reply)
    return 0


def stored_sessions(options: argparse.Namespace) -> int:
    from .errors import ElelemError
    from .faces.terminal.resume import sessions

    try:
        return sessions(options)
    except ElelemError as exc:
        print(f"elelem: {exc}", file=sys.stderr)
        return 1


def ask_prompt(words: list[str]) -> str:
    prompt = " ".join(words)
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped:
            prompt += f"\n\n```\n{piped}\n```"
    return prompt
