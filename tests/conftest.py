"""Shared fixtures; the helpers they build on are in tests/support/. No test sees the
user's plugins or the repo's AGENTS.md: HOME and the working directory are temp dirs. And
no test writes to the user's real folders: the session fails if they changed
(tests/support/real_folders.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings
from support import real_folders
from support.outputs import SpyOutput

from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

REAL_FOLDERS = pytest.StashKey[dict]()

# No timed assertions in tests (speed is for bench/): hypothesis's 200 ms per-example
# deadline failed a property test on this loaded 2-core machine; the properties stay.
settings.register_profile("elelem", deadline=None)
settings.load_profile("elelem")


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
    for name, value in real_folders.own(home).items():  # HOME and every XDG_* folder
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ELELEM_STATE_DIR", raising=False)
    monkeypatch.delenv("ELELEM_PROVIDER", raising=False)
    # the default provider must stay the stub whatever the machine has set up
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing answers there
    monkeypatch.chdir(home)  # no AGENTS.md from the repository in the system prompt
    return home


@pytest.fixture
def output() -> SpyOutput:
    return SpyOutput()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("# My project\n")
    return tmp_path


@pytest.fixture
def session(workdir: Path, output: SpyOutput):
    return start(core_registry(entry_points=False), "stub", cwd=workdir, output=output)
