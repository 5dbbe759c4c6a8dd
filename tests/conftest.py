"""Shared fixtures. No test sees the user's plugins or the repo's AGENTS.md: HOME and
the working directory are temp dirs. And no test writes to the user's real folders: the
session fails if they changed (tests/real_folders.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import real_folders

from elelem_daemon.io import NullOutput
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

REAL_FOLDERS = pytest.StashKey[dict]()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.stash[REAL_FOLDERS] = real_folders.snapshot()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.stash.get(REAL_FOLDERS, None)
    found = real_folders.changes(before, real_folders.snapshot()) if before is not None else []
    if not found:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = ["the tests changed the user's real elelem folders:", *found[:50]]
    if reporter is not None:
        reporter.write_sep("=", "real folders changed", red=True)
        for line in lines:
            reporter.write_line(line)
    else:
        print("\n".join(lines))
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("ELELEM_PROVIDER", raising=False)
    # the default provider must stay the stub whatever the machine has set up
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing answers there
    monkeypatch.chdir(home)  # no AGENTS.md from the repository in the system prompt
    return home


class Recorder(NullOutput):
    """An Output that remembers every call, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def say(self, text: str, kind: str = "plain") -> None:
        self.calls.append(("say", (text, kind)))

    def thinking(self, text: str) -> None:
        self.calls.append(("thinking", text))

    def saying(self, text: str) -> None:
        self.calls.append(("saying", text))

    def reply(self, text: str) -> None:
        self.calls.append(("reply", text))

    def doing(self, call: dict[str, Any]) -> None:
        self.calls.append(("doing", call))

    def result(self, call: dict[str, Any], result: Any) -> None:
        self.calls.append(("result", result.to_dict()))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


class Scripted:
    """A provider that replays a list of event lists, one per fetch, recording the messages."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, *rounds: list[dict[str, Any]] | Exception) -> None:
        self.rounds = list(rounds)
        self.requests: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    async def fetch(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]):
        self.requests.append(([dict(m) for m in messages], tools))
        events = self.rounds.pop(0) if self.rounds else [{"type": "saying", "text": "ok"}]
        if isinstance(events, Exception):
            raise events
        for event in events:
            if isinstance(event, Exception):
                raise event
            yield event


@pytest.fixture
def output() -> Recorder:
    return Recorder()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("# My project\n")
    return tmp_path


@pytest.fixture
def session(workdir: Path, output: Recorder):
    return start(core_registry(entry_points=False), "stub", cwd=workdir, output=output)
