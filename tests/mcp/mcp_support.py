"""What the MCP tests share: the real servers in servers/, a project folder with its
`.mcp.json`, sessions that are closed (their servers stopped) after each test, HTTP
servers on 127.0.0.1. Not a conftest.py: a second module named `conftest` would hide
tests/conftest.py from the tests that import it, so each test module imports its
fixtures from here (`from mcp_support import ...`)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from support.vetting import confirm

from elelem_daemon.plugins import core_registry
from elelem_daemon.session import Session, start

SERVERS = Path(__file__).parent / "servers"
DEMO = SERVERS / "demo.py"


def stdio(script: str = "demo.py", *args: str, **more: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / script), *args], **more}


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELELEM_MCP_TIMEOUT", "60")  # generous: the machine is shared
    monkeypatch.setenv("ELELEM_MCP_BACKOFF", "0.2")
    monkeypatch.setenv("ELELEM_MCP_RETRIES", "2")


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("MARKS", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def configure(folder: Path, servers: dict[str, Any]) -> Path:
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return folder


def allow_mcp(rules: str = "*__* allow\nresource allow\n") -> None:
    """Let MCP tools run without asking (the default asks)."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "elelem" / "permissions"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rules)
    confirm()  # the user's own edit, confirmed (safety/vetted.py)


@pytest.fixture
async def sessions(output: Any):
    """open(cwd, servers) -> a session whose servers are up (or have given up)."""
    opened: list[Session] = []

    async def open_(
        folder: Path, servers: dict[str, Any] | None = None, wait: bool = True, **options: Any
    ) -> Session:
        if servers is not None:
            configure(folder, servers)
        session = start(
            core_registry(entry_points=False), "stub", cwd=folder, output=output, **options
        )
        opened.append(session)
        if wait and getattr(session, "mcp", None) is not None:
            assert await session.mcp.ready(120), session.mcp.status()
        return session

    yield open_
    for session in opened:
        manager = getattr(session, "mcp", None)
        if manager is not None:
            await asyncio.wait_for(manager.aclose(), 30)


async def until(check: Any, timeout: float = 60.0, every: float = 0.05) -> Any:
    """Wait for check() to be true (or awaitable true); its value, or fail."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout}s: {check}")
        await asyncio.sleep(every)


def status_of(session: Session, name: str) -> dict[str, Any]:
    return next(s for s in session.mcp.status()["servers"] if s["name"] == name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def listening(port: int, timeout: float = 60) -> None:
    async def connects() -> bool:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            return False
        writer.close()
        return True

    await until(connects, timeout, 0.1)


class HttpServer:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.port = free_port()
        self.process: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{'mcp' if self.kind == 'http' else 'sse'}"

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(DEMO),
            self.kind,
            str(self.port),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        await listening(self.port)

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


@pytest.fixture
async def http_server():
    started: list[HttpServer] = []

    async def start(kind: str = "http") -> HttpServer:
        server = HttpServer(kind)
        started.append(server)
        await server.start()
        return server

    yield start
    for server in started:
        await server.stop()
