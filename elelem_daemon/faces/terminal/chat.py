"""`elelem chat` (the REPL) and `elelem ask` (one prompt, one reply) in the terminal."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from ...commands import Commands
from ...config import choose_provider
from ...errors import AttachmentError, ElelemError
from ...io import Input, Output
from ...plugins import core_registry
from ...registry import Registry
from ...session import MakeIo, Session, resume, start
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
    ask = options.command == "ask"
    keep_stdout = ask and not sys.stdout.isatty()
    saving = None if options.no_save else store
    picking = getattr(options, "pick", False)
    resuming = picking or getattr(options, "resume", None) is not None
    title = None
    try:
        project, make_io = not options.no_project_plugins, console(keep_stdout)
        if resuming:
            stored = choose(store) if picking else pick(store, options.resume, Path.cwd())
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
    mcp = getattr(session, "mcp", None)
    if mcp is not None:  # the browser step of an MCP server's OAuth, printed
        mcp.on_authorize = lambda name, url: session.output.say(
            f"MCP server {name} needs authorization: open {url}", "info"
        )
    try:
        if not ask:
            await Repl(session, title).run()
            return 0
        return await ask_once(session, options.prompt, keep_stdout)
    finally:
        await session.close()


async def ask_once(session: Session, words: list[str], print_reply: bool) -> int:
    """One prompt, one reply. The session's MCP servers are waited for first, so their
    tools are there for the turn (see `wait_for_servers`)."""
    mcp = getattr(session, "mcp", None)
    if mcp is not None and not await wait_for_servers(mcp, mcp_wait()):
        late = [s["name"] for s in mcp.status()["servers"] if s["state"] != "ready"]
        print(f"elelem: MCP servers not ready: {', '.join(late)}", file=sys.stderr)
    try:
        result = await session.turn(ask_prompt(words))
    except AttachmentError as exc:
        print(f"elelem: {exc}", file=sys.stderr)
        return 1
    if not result.reply.strip():
        print("elelem: no reply", file=sys.stderr)
        return 1
    if print_reply:
        print(result.reply)
    return 0


def ask_prompt(words: list[str]) -> str:
    prompt = " ".join(words)
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped:
            prompt += f"\n\n```\n{piped}\n```"
    return prompt


def mcp_wait() -> float:
    """How long `elelem ask` waits for its MCP servers: ELELEM_MCP_TIMEOUT (their own
    start-up bound), else 30 s."""
    try:
        return max(0.0, float(os.environ.get("ELELEM_MCP_TIMEOUT", "30")))
    except ValueError:
        return 30.0


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
