"""Modes and plans on the real terminal (a pty, read as a VT100 screen): the mode on the
status line, `/mode`, plan mode's refusal, the todo list, and `--resume` redrawing the
last plan and the mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.terminal import Terminal

pytestmark = pytest.mark.e2e
TODOS = [
    {"content": "read the code", "status": "completed"},
    {"content": "fix the bug", "status": "in_progress"},
    {"content": "run the tests", "status": "pending"},
]


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

    def start(*args: str) -> Terminal:
        environ = {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
        }
        terminal = Terminal(*(args or ("chat",)), cwd=project, env=environ)
        opened.append(terminal)
        at_prompt(terminal)
        return terminal

    yield start
    for terminal in opened:
        terminal.close()


def at_prompt(terminal: Terminal, timeout: float = 30.0) -> None:
    terminal.wait(lambda: terminal.prompt_line() == ">", timeout, "an empty prompt")


def test_the_status_line_shows_the_mode_and_mode_switches(open_terminal, project: Path):
    terminal = open_terminal()
    terminal.wait(lambda: terminal.lines()[-1].strip() == "stub · stub · 0 messages", 10, "status")
    terminal.line("/mode")
    terminal.wait_for("* build")
    at_prompt(terminal)
    terminal.line("/mode plan")
    terminal.wait_for("→ mode: plan")
    at_prompt(terminal)
    terminal.wait(lambda: terminal.lines()[-1].strip().endswith("· plan"), 10, "the mode shown")
    assert terminal.lines()[-1].strip() == "stub · stub · 0 messages · plan"
    terminal.line('!tool write {"path": "x.txt", "content": "y"}')
    terminal.wait_for("not allowed in plan mode")
    at_prompt(terminal)
    assert not (project / "x.txt").exists()
    terminal.line("/mode nope")
    terminal.wait_for('unknown mode: "nope"')


def test_a_plan_is_a_compact_list_and_resume_redraws_it(open_terminal):
    terminal = open_terminal()
    terminal.line("/mode verify")
    terminal.wait_for("→ mode: verify")
    at_prompt(terminal)
    terminal.line("!tool todo " + json.dumps({"todos": TODOS}))
    terminal.wait_for("[~] fix the bug")
    at_prompt(terminal)
    text = terminal.text()
    assert "[x] read the code" in text and "[ ] run the tests" in text
    terminal.send("\x04")  # Ctrl-D: leave
    assert terminal.exit_code() == 0

    again = open_terminal("chat", "--resume")
    again.wait_for("[~] fix the bug")
    again.wait_for("→ mode: verify")
    again.wait(lambda: again.lines()[-1].strip().endswith("· verify"), 10, "the stored mode")
