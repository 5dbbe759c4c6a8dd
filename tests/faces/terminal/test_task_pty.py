"""The `task` sub-agent in the terminal (issue 20): the real `elelem chat` under a real
pty shows the task call, the child's tool calls under it, and the parent's reply; the
child's own text is not printed as the reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.terminal import Terminal

pytestmark = pytest.mark.e2e


def test_a_task_shows_the_child_calls_and_keeps_only_its_answer(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".config" / "elelem").mkdir(parents=True)
    project.mkdir()
    (project / "a.txt").write_text("child-read-this\n")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    terminal = Terminal("chat", cwd=project, env=env, lines=60)
    try:
        terminal.wait(lambda: terminal.prompt_line() == ">", what="the prompt")
        inner = '!tool read {"path": "a.txt"}'
        terminal.line("!tool task " + json.dumps({"prompt": inner}))
        terminal.wait_for("+ read(")
        terminal.wait(lambda: terminal.prompt_line() == ">", what="the prompt")
        text = terminal.text()
        assert text.index("+ task(") < text.index("+ read(") < text.rindex("done.")
        terminal.line("/context")
        terminal.wait_for("3. assistant: done.")
        assert "4." not in terminal.text().rsplit("> /context", 1)[1]
    finally:
        terminal.close()
