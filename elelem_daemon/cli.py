"""The command line: `elelem chat`, `elelem ask`, `elelem daemon`."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from . import __version__

COMMANDS = ("chat", "ask", "daemon", "help")


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
        if name == "ask":
            cmd.add_argument("prompt", nargs="+")
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

    setup(options.log_level)
    if options.command == "daemon":
        from .stdio import serve

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
    from .io import Output
    from .plugins import core_registry
    from .repl import Repl
    from .session import start

    ask = options.command == "ask"
    output = None
    if ask and not sys.stdout.isatty():  # keep stdout for the reply alone
        output = Output(stream=sys.stderr, color=False)
    try:
        session = start(
            core_registry(),
            options.provider or default_provider(),
            options.model,
            output=output,
            project=not options.no_project_plugins,
            terminal=True,
        )
    except ElelemError as exc:
        print(f"elelem: {exc}", file=sys.stderr)
        return 1
    if not ask:
        await Repl(session).run()
        return 0
    reply = await session.turn(ask_prompt(options.prompt))
    if not reply.strip():
        print("elelem: no reply", file=sys.stderr)
        return 1
    if output is not None:
        print(reply)
    return 0


def ask_prompt(words: list[str]) -> str:
    prompt = " ".join(words)
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped:
            prompt += f"\n\n```\n{piped}\n```"
    return prompt
