"""End-to-end fixtures: the real daemon as a subprocess, driven by elelem_daemon.jsonrpc.client.

HOME points at a temporary folder so no user plugin loads, and the daemon runs in its
own temporary working directory with the stub provider.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from support.real_folders import own

from elelem_daemon.jsonrpc.client import Client
from elelem_daemon.processes.procs import descendants  # noqa: F401  (the tests import it from here)

T = TypeVar("T")
pytestmark = pytest.mark.e2e


async def within(awaitable: Awaitable[T], seconds: float = 20.0) -> T:
    """Every wait in these tests is bounded: a hang fails, it does not block the suite."""
    return await asyncio.wait_for(awaitable, seconds)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    values = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    config = home / ".config"
    (config / "elelem").mkdir(parents=True)
    # These tests are about the daemon: let `execute` run without the permission
    # policy's question (tests/e2e/test_stored.py tests the policy over the wire).
    (config / "elelem" / "permissions").write_text("execute allow\n")
    return {**own(home, values), "ELELEM_LOG_LEVEL": "warning"}  # HOME and every XDG_*


@pytest.fixture
async def spawn(env: dict[str, str], workdir: Path) -> AsyncIterator[Any]:
    """spawn(*args, on_ask=None) -> a started Client; closed at the end of the test."""
    clients: list[Client] = []

    async def start(*args: str, on_ask: Any = None, **options: Any) -> Client:
        options.setdefault("env", env)
        options.setdefault("cwd", str(workdir))
        client = await Client.spawn("--provider", "stub", *args, on_ask=on_ask, **options)
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.close()


@pytest.fixture
async def client(spawn: Any) -> Client:
    client = await spawn()
    await within(client.initialize())
    return client


@pytest.fixture
async def session(client: Client) -> str:
    return (await within(client.new_session()))["sessionId"]


def running(pid: int) -> bool:
    """Whether pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""
