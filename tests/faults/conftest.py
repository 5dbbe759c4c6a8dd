"""Fault fixtures: the e2e ones (the real daemon over stdio, HOME and cwd in temp
folders, the stub provider), plus what faults need: project plugins, raw capture of
the daemon's pipes, its memory and its process tree."""

from __future__ import annotations

import asyncio
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from e2e.conftest import client, descendants, env, running, session, spawn, within, workdir

__all__ = ["client", "env", "session", "spawn", "workdir", "within"]
pytestmark = pytest.mark.e2e


def plugin(folder: Path, name: str, source: str) -> Path:
    """Write a plugin file `NAME.py` into FOLDER/.agents/plugins."""
    plugins = folder / ".agents" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    path = plugins / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def rss_kib(pid: int) -> int:
    """Resident memory of a process, from /proc/PID/status (VmRSS, in KiB)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


async def tree_with(pid: int, needle: str, seconds: float = 10.0) -> set[int]:
    """The descendants of pid once one of them runs exactly the command line needle."""
    for _ in range(int(seconds / 0.02)):
        pids = descendants(pid)
        if any(needle == cmdline(p) for p in pids):
            return pids
        await asyncio.sleep(0.02)
    raise AssertionError(f"no descendant of {pid} runs {needle!r}")


async def all_gone(pids: set[int], seconds: float = 15.0) -> list[int]:
    """Wait until none of pids runs; return those still running after `seconds`."""
    for _ in range(int(seconds / 0.05)):
        if not any(running(p) for p in pids):
            return []
        await asyncio.sleep(0.05)
    return [p for p in pids if running(p)]


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


class Tap:
    """Every byte the daemon writes to stdout, and to stderr when piped."""

    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()
        self._task: asyncio.Task[None] | None = None

    def attach(self, client: Any) -> None:
        stdout = client.process.stdout
        read = stdout.read

        async def tee(n: int = -1) -> bytes:
            data = await read(n)
            self.stdout += data
            return data

        stdout.read = tee
        if client.process.stderr is not None:
            self._task = asyncio.create_task(self._drain(client.process.stderr))

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.stderr += chunk

    async def done(self) -> None:
        if self._task is not None:
            await within(self._task, 10)


class Raw:
    """The daemon driven byte by byte: writes are not paired with reads, so a test
    decides when (and whether) the daemon's answers are read."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        from elelem_daemon.jsonrpc.framing import FrameReader

        assert process.stdout is not None
        self.process = process
        stdout = process.stdout
        self.reader = FrameReader(lambda: stdout.read(65536))

    @classmethod
    async def spawn(cls, env: dict[str, str], cwd: Path, *args: str) -> Raw:
        import sys

        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "elelem_daemon",
            "--provider",
            "stub",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
            cwd=str(cwd),
        )
        return cls(process)

    async def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def message(self) -> dict[str, Any]:
        import json

        frame = await self.reader.frame()
        assert isinstance(frame, bytes), frame
        return json.loads(frame)

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


@pytest.fixture
async def raw(env: dict[str, str], workdir: Path) -> Any:
    """raw(*args) -> a started Raw daemon; killed at the end of the test."""
    started: list[Raw] = []

    async def start(*args: str, **more_env: str) -> Raw:
        daemon = await Raw.spawn({**env, **more_env}, workdir, *args)
        started.append(daemon)
        return daemon

    yield start
    for daemon in started:
        await daemon.close()


async def anywhere(needle: str, seconds: float = 10.0, exact: bool = False) -> set[int]:
    """The pids of every process whose command line contains needle, once there is one
    (for what escaped a process tree: double forks, setsid)."""
    for _ in range(int(seconds / 0.02)):
        pids = [int(e) for e in os.listdir("/proc") if e.isdigit()]
        found = {p for p in pids if (cmdline(p) == needle if exact else needle in cmdline(p))}
        if found:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"no process runs {needle!r}")


def stored(env: dict[str, str]) -> bytes:
    """Every byte of every stored session file (issue 8's store) under env's state home."""
    folder = Path(env["XDG_STATE_HOME"]) / "elelem" / "sessions"
    files = sorted(folder.glob("*")) if folder.is_dir() else []
    assert files, f"no stored session in {folder}"
    return b"\n".join(path.read_bytes() for path in files)
