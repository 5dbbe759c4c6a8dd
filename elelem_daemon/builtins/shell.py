"""Built-in tools `execute` and `list`, and the process runner the search tools share.

Commands run in the session's working directory, in their own process group, with
stdin closed and stdout+stderr merged. A timeout or a cancelled turn kills the whole
group and every descendant (SIGTERM, then SIGKILL). Once the command exits, the
background children it left (which may hold its output open) are killed too.
Output past the cap keeps its head and tail around a visible marker. Provider API
keys (`*_API_KEY`) are removed from the environment unless ELELEM_TOOL_ENV_KEEP_KEYS=1.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from ..procs import descendants, signal_all
from ..registry import Plugin

TIMEOUT = float(os.environ.get("ELELEM_TOOL_TIMEOUT", "120"))
OUTPUT_CAP = int(os.environ.get("ELELEM_TOOL_OUTPUT_CAP", "100000"))
GRACE = 0.5
LINGER = 0.5  # how long output may still come once the command itself has exited


def tool_env() -> dict[str, str]:
    if os.environ.get("ELELEM_TOOL_ENV_KEEP_KEYS") == "1":
        return dict(os.environ)
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


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

    def text(self) -> str:
        marker = f"\n[... {self.dropped} bytes truncated ...]\n" if self.dropped else ""
        return (
            bytes(self.head).decode("utf-8", "replace")
            + marker
            + bytes(self.tail).decode("utf-8", "replace")
        )


def kill_group(process: asyncio.subprocess.Process, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def stop(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the process group and every descendant, then SIGKILL whatever is left
    after a grace period (descendants first looked up while their parents live)."""
    tree = descendants(process.pid)
    kill_group(process, signal.SIGTERM)
    signal_all(tree, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(process.wait()), GRACE)
    except TimeoutError:
        pass
    tree |= descendants(process.pid)
    kill_group(process, signal.SIGKILL)  # grandchildren may outlive the leader
    signal_all(tree, signal.SIGKILL)


async def run(
    argv: list[str], cwd: Path, timeout: float | None = None, cap: int | None = None
) -> dict[str, Any]:
    """Run argv; return `{exit_status, content}`, or an error when it timed out."""
    timeout = timeout or TIMEOUT
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=tool_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    output = Capped(cap or OUTPUT_CAP)

    async def read() -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(65536):
            output.add(chunk)

    async def drain() -> int:
        reading = asyncio.ensure_future(read())
        try:
            status = await process.wait()
            # the command is over: what still holds its output open is a background child
            for _ in range(2):
                if not reading.done():
                    await asyncio.wait([reading], timeout=LINGER)
                if not reading.done():
                    kill_group(process, signal.SIGKILL)  # what it wrote is still read
            return status
        finally:
            reading.cancel()

    try:
        status = await asyncio.wait_for(drain(), timeout)
    except TimeoutError:
        await stop(process)
        return {
            "error": f"timed out after {timeout:g}s",
            "exit_status": None,
            "content": output.text(),
        }
    except asyncio.CancelledError:
        await stop(process)
        raise
    kill_group(process, signal.SIGKILL)  # reap background children the command left behind
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
    )
    async def execute(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        return await run(["bash", "-c", args["command"]], session.cwd, args.get("timeout"))

    @plugin.tool(
        "list",
        "List directory contents",
        {
            "path": {"type": "string", "description": "Directory (default: working directory)"},
            "recursive": {"type": "boolean", "description": "Recurse into subdirectories"},
        },
        aliases=["ls"],
    )
    async def list_(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        flags = "-laR" if args.get("recursive") else "-la"
        return await run(["ls", flags, "--", args.get("path") or "."], session.cwd)
