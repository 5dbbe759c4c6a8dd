"""Context: the sizes of a run (full or quick) and how to start each server."""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .wire import Conn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVERS = HERE / "servers"

# Settings that would make the daemon reach for a real provider or the user's files.
SCRUBBED = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "OLLAMA_HOST",
    "OLLAMA_MODEL",
    "ELELEM_MODEL",
)


@dataclass
class Context:
    quick: bool = False
    python: str = sys.executable
    daemon_python: str = sys.executable  # another checkout's venv: compare its daemon
    home: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="bench-home-")))

    def __post_init__(self) -> None:
        # The figures measure the daemon, not the permission policy's question: let the
        # `execute` they run (the cancel figure's `sleep`) go without asking.
        rules = self.home / ".config" / "elelem" / "permissions"
        rules.parent.mkdir(parents=True, exist_ok=True)
        rules.write_text("execute allow\n")

    def n(self, full: int, quick: int) -> int:
        """A size: `full` normally, `quick` in quick mode."""
        return quick if self.quick else full

    # -- processes ----------------------------------------------------------
    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment: a scratch HOME, the stub provider, quiet logs."""
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local/share"),
            XDG_STATE_HOME=str(self.home / ".local/state"),
            ELELEM_PROVIDER="stub",
            ELELEM_LOG_LEVEL="warning",
        )
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # both sides start from cached bytecode
        env.update(extra)
        return env

    def daemon_argv(self) -> list[str]:
        """`elelem daemon` from this interpreter's environment (or `-m` without the script)."""
        script = Path(self.daemon_python).parent / "elelem"
        if script.exists():
            return [str(script), "daemon"]
        return [self.daemon_python, "-m", "elelem_daemon", "daemon"]

    async def daemon(self, **env: str) -> Conn:
        conn = await Conn.spawn(self.daemon_argv(), env=self.env(**env), cwd=str(self.home))
        conn.env = env  # type: ignore[attr-defined]
        return conn

    async def acp(self) -> Conn:
        """`elelem daemon --acp`, the ACP face (NDJSON) of the same interpreter."""
        argv = [*self.daemon_argv(), "--acp"]
        return await Conn.spawn(argv, framing="ndjson", env=self.env(), cwd=str(self.home))

    async def echo(self) -> Conn:
        argv = [self.python, str(SERVERS / "echo.py")]
        return await Conn.spawn(argv, env=self.env(), cwd=str(self.home))

    async def peer(self) -> Conn:
        argv = [self.python, str(SERVERS / "peer_agent.py")]
        return await Conn.spawn(argv, framing="ndjson", env=self.env(), cwd=str(self.home))


async def initialize(conn: Conn, **capabilities: Any) -> Any:
    return await conn.request(
        "initialize",
        {"processId": os.getpid(), "clientInfo": {"name": "bench"}, "capabilities": capabilities},
    )


async def settled(conn: Conn) -> None:
    """One round trip after the first session, so that a figure about streaming or
    cancelling times no start-up work left over. (Since issue 30 the daemon answers
    `initialize` with pygls loaded; issue 22's faces/daemon/early.py answered the first
    `session/new` without it, and the first other request waited for the import.)"""
    await conn.request("session/list", {})


async def open_session(conn: Conn, cwd: Path, **params: Any) -> str:
    result = await conn.request("session/new", {"cwd": str(cwd), **params})
    return result["sessionId"]
