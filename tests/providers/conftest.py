"""Fixtures: a replay server on 127.0.0.1, providers pointed at it, a recording Output."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.plugins import core_registry
from elelem_daemon.session import Session, start

from .replay import ReplayServer, Reply, chunks

STREAMS = Path(__file__).parent / "streams"
CANARY = "sk-canary-7Qz1XvLm0Np9"  # a fake key: it must never show up anywhere but the header
SETTINGS = (
    "ELELEM_PROVIDER",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MAX_TOKENS",
    "ANTHROPIC_THINKING_BUDGET",
    "OPENAI_API_KEY",
    "OPENAI_MODEL",
    "OPENAI_BASE_URL",
    "OPENAI_MAX_TOKENS",
    "OPENAI_STREAM_USAGE",
    "OPENAI_TOOL_CHOICE",
    "OLLAMA_HOST",
    "OLLAMA_MODEL",
    "OLLAMA_THINK",
    "OLLAMA_NUM_CTX",
    "ELELEM_CONNECT_TIMEOUT",
    "ELELEM_READ_TIMEOUT",
    "ELELEM_RETRIES",
    "ELELEM_RETRY_MAX_DELAY",
    "XDG_CONFIG_HOME",
)
README_TOOL = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
}
PROMPT = [
    {"role": "system", "content": "You are a terminal coding agent."},
    {"role": "user", "content": "show me the readme"},
]
REGISTRY = core_registry()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the machine's keys or settings."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    replay = ReplayServer()
    yield replay
    replay.stop()


def stream(name: str, size: int | None = None) -> Reply:
    """A recorded stream as one reply; `size` slices it into that many bytes per chunk."""
    data = (STREAMS / name).read_bytes()
    kind = "application/x-ndjson" if name.endswith(".ndjson") else "text/event-stream"
    return Reply(chunks(data, size) if size else [data], content_type=kind)


def point(monkeypatch: pytest.MonkeyPatch, name: str, url: str) -> None:
    """Set the environment so provider NAME talks to the server at URL with the canary key."""
    if name == "anthropic":
        monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    elif name == "openai":
        monkeypatch.setenv("OPENAI_API_KEY", CANARY)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
    else:
        monkeypatch.setenv("OLLAMA_HOST", url)


def make(name: str, url: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Provider NAME built by its factory, talking to URL; its backoff waits are recorded."""
    point(monkeypatch, name, url)
    built = REGISTRY.build_provider(name)
    built.waits = []

    async def sleep(seconds: float) -> None:
        built.waits.append(seconds)

    built.sleep = sleep
    return built


@pytest.fixture
def provider(
    request: pytest.FixtureRequest, server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """The provider named by the test's indirect `provider` parameter."""
    return make(request.param, server.url, monkeypatch)


async def collect(provider: Any, messages: list[dict[str, Any]] | None = None) -> list[dict]:
    events = []
    async for event in provider.fetch(messages or PROMPT, [README_TOOL]):
        events.append(event)
    return events


class Recorder:
    """An Output that records every call, and signals the first streamed delta."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.streaming = asyncio.Event()

    def say(self, text: str, kind: str = "plain") -> None:
        self.events.append(("say", (text, kind)))

    def thinking(self, text: str) -> None:
        self.events.append(("thinking", text))

    def saying(self, text: str) -> None:
        self.events.append(("saying", text))
        self.streaming.set()

    def reply(self, text: str) -> None:
        self.events.append(("reply", text))

    def doing(self, call: dict[str, Any]) -> None:
        self.events.append(("doing", call))

    def result(self, call: dict[str, Any], result: Any) -> None:
        self.events.append(("result", result.to_dict()))

    def waiting(self) -> None:
        pass

    def of(self, kind: str) -> list[Any]:
        return [value for k, value in self.events if k == kind]


def session_for(
    name: str, server: ReplayServer, monkeypatch: pytest.MonkeyPatch, cwd: Path
) -> tuple[Session, Recorder]:
    """A real session (built-in tools, files in `cwd`) whose provider talks to `server`."""
    point(monkeypatch, name, server.url)
    recorder = Recorder()
    session = start(REGISTRY, name, cwd=cwd, output=recorder, plugin_files=False)

    async def sleep(seconds: float) -> None:
        pass

    session.provider.sleep = sleep
    return session, recorder
