"""Built-in tools `execute` and `list`, and the process runner the search tools share.

Commands run in the session's working directory, in their own process group, with
stdin closed and stdout+stderr merged. A timeout or a cancelled turn kills the whole
group and every descendant (SIGTERM, then SIGKILL). Once the command exits, the
background children it left (which may hold its output open) are killed too.
Output past the cap keeps its head and tail around a visible marker. Secrets (API
keys, tokens, passwords: `keys.secret`) are not in the environment a command
gets, unless `ELELEM_TOOL_ENV_KEEP` names them (`ELELEM_TOOL_ENV_KEEP_KEYS=1`: all).
Commands die with the daemon, even on SIGKILL: the direct child by its parent-death
signal, its process group (grandchildren included) by the reaper (see procs.py).
A command that created, changed or removed a protected file (protected.py: git hooks,
`.agents`, shell rc files, ...) has them listed in its result's `protected` and
`warning`, and the user is told: a command can write anything, this makes it seen.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

from ..base import keys
from ..base.config import number
from ..ports import SessionView
from ..processes.procs import holders, kill_group, pipe_of, reaper, signal_all, stop, tool_preexec
from ..registry import Plugin
from ..safety.protected import changes, snapshot
from .files import target

TIMEOUT = number("ELELEM_TOOL_TIMEOUT", 120)
OUTPUT_CAP = int(number("ELELEM_TOOL_OUTPUT_CAP", 100000, minimum=1))
LINGER = 0.5  # how long output may still come once the command itself has exited
POLL = 0.05  # how often a running command is checked for having exited


def tool_env() -> dict[str, str]:
    return keys.tool_env()


class Capped:
    """Keeps the first and last cap/2 bytes of a stream and counts what it drops."""

    def __init__(self, cap: int) -> None:
        self.half = cap // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.half:
            self.dropped += len(self.tail) - self.half
            del self.tail[: len(self.tail) - self.half]

    def data(self) -> bytes:
        """What was kept, when nothing was dropped (else the text() has the marker)."""
        return bytes(self.head) + bytes(self.tail)

    def text(self) -> str:
        marker = f"\n[... {self.dropped} bytes truncated ...]\n" if self.dropped else ""
        return (
            bytes(self.head).decode("utf-8", "replace")
            + marker
            + bytes(self.tail).decode("utf-8", "replace")
        )


def output_pipe(process: asyncio.subprocess.Process) -> str | None:
    """The command's output pipe as /proc names it, to find whoever holds it later."""
    transport = process._transport  # type: ignore[attr-defined]
    pipe = transport.get_pipe_transport(1) if transport is not None else None
    source = pipe.get_extra_info("pipe") if pipe is not None else None
    try:
        return pipe_of(source.fileno()) if source is not None else None
    except (ValueError, OSError):  # a quick command may have closed it already
        return None


async def run(
    argv: list[str],
    cwd: Path,
    timeout: float | None = None,
    cap: int | None = None,
    env: dict[str, str] | None = None,
    raw: bool = False,
) -> dict[str, Any]:
    """Run argv; return `{exit_status, content}`, or an error when it timed out. `env`
    adds to the tools' environment; `raw`: content is the bytes, and `truncated` says
    whether some were dropped."""
    timeout = timeout or TIMEOUT
    keys.guard()  # from the first tool on, no process of the user reads our memory
    reaper.start()
    spawning = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env={**tool_env(), **(env or {})},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=tool_preexec(),
        )
    )
    try:
        process = await asyncio.shield(spawning)
    except asyncio.CancelledError:  # cancelled while starting: the group must still die
        process = await spawning
        reaper.watch(process.pid)
        await stop(process)
        reaper.forget(process.pid)
        raise
    reaper.watch(process.pid)
    try:
        return await supervise(process, timeout, cap, raw)
    finally:
        reaper.forget(process.pid)


async def supervise(
    process: asyncio.subprocess.Process, timeout: float, cap: int | None, raw: bool = False
) -> dict[str, Any]:
    """Read the output of a started command until it is over; kill what it leaves."""
    output = Capped(cap or OUTPUT_CAP)
    pipe = output_pipe(process)

    async def read() -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(65536):
            output.add(chunk)

    async def drain() -> int:
        reading = asyncio.ensure_future(read())
        try:
            # not process.wait(): it also waits for the output to close (Python 3.11)
            while not reading.done() and process.returncode is None:
                await asyncio.wait([reading], timeout=POLL)
            for _ in range(2):  # the command is over: what holds its output is a child of it
                if not reading.done():
                    await asyncio.wait([reading], timeout=LINGER)
                if not reading.done():
                    kill_group(process, signal.SIGKILL)  # what it wrote is still read
            if not reading.done():  # a child out of the group (setsid) holds it
                signal_all(holders(pipe), signal.SIGKILL)
                await asyncio.wait([reading], timeout=LINGER)
            if not reading.done() and process.returncode is not None:
                return process.returncode  # still held by something out of reach: let go
            return await process.wait()
        finally:
            reading.cancel()

    try:
        async with asyncio.timeout(timeout):  # not wait_for: it can lose a cancel
            status = await drain()
    except TimeoutError:
        await stop(process, pipe)
        return {
            "error": f"timed out after {timeout:g}s",
            "exit_status": None,
            "content": output.text(),
        }
    except asyncio.CancelledError:
        await stop(process, pipe)
        raise
    kill_group(process, signal.SIGKILL)  # reap background children the command left behind
    if raw:
        return {"exit_status": status, "content": output.data(), "truncated": output.dropped > 0}
    return {"exit_status": status, "content": output.text()}


def register(plugin: Plugin) -> None:
    @plugin.tool(
        "execute",
        "Run shell command (supports pipes and redirections)",
        {
            "command": {"type": "string", "description": "A bash command line"},
            "timeout": {"type": "number", "description": f"Seconds (default {TIMEOUT:g})"},
        },
        ["command"],
        ["bash", "sh", "exec", "execute<|channel|>"],
        kind="execute",
    )
    async def execute(session: SessionView, args: dict[str, Any]) -> dict[str, Any]:
        before = snapshot(session.cwd)  # a command may write anything: notice protected files
        result = await run(["bash", "-c", args["command"]], session.cwd, args.get("timeout"))
        if changed := changes(before, snapshot(session.cwd)):
            result["protected"] = changed
            note = (
                "this command changed protected files, which decide what runs later: "
                + ", ".join(changed)
            )
            result["warning"] = note
            # the face adds its one prefix (`Error:`, `error:`): none here (issue 36)
            session.output.say(f"execute: {note}", "error")
        return result

    @plugin.tool(
        "list",
        "List directory contents",
        {
            "path": {"type": "string", "description": "Directory (default: working directory)"},
            "recursive": {"type": "boolean", "description": "Recurse into subdirectories"},
        },
        aliases=["ls"],
        kind="search",
    )
    async def list_(session: SessionView, args: dict[str, Any]) -> dict[str, Any]:
        flags = "-laR" if args.get("recursive") else "-la"
        path = args.get("path") or "."
        target(session, path)  # refuses /proc, /sys and /dev
        return await run(["ls", flags, "--", path], session.cwd)
