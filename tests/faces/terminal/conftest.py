"""The terminal face's pty tests: a scratch home and project, and `open_terminal(*args)`,
the real `elelem` under a pty (support/terminal.py) at its first empty prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.terminal import Terminal


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".config" / "elelem").mkdir(parents=True)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def open_terminal(home: Path, project: Path):
    opened: list[Terminal] = []

    def start(*args: str, env: dict[str, str] | None = None, **options: int) -> Terminal:
        environ = {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            **(env or {}),
        }
        terminal = Terminal(*(args or ("chat",)), cwd=project, env=environ, **options)
        opened.append(terminal)
        at_prompt(terminal)
        return terminal

    yield start
    for terminal in opened:
        terminal.close()


def at_prompt(terminal: Terminal, timeout: float = 30.0) -> None:
    """Wait until the cursor sits on an empty `> ` prompt."""
    terminal.wait(lambda: terminal.prompt_line() == ">", timeout, "an empty prompt")
