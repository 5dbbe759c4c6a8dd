"""Modes and plans on the real terminal (a pty, read as a VT100 screen): the mode on the
status line, `/mode`, plan mode's refusal, the todo list, and `--resume` redrawing the
last plan and the mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import at_prompt

pytestmark = pytest.mark.e2e
TODOS = [
    {"content": "read the code", "status": "completed"},
    {"content": "fix the bug", "status": "in_progress"},
    {"content": "run the tests", "status": "pending"},
]


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
