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


def test_a_tasks_child_calls_are_indented_under_it(tmp_path: Path) -> None:
    """The child's tool calls and their marks print under the task call, indented as
    VS Code and Neovim nest them (`parentToolCallId`); the parent's own are not."""
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
        inner = '!tools [["read", {"path": "a.txt"}], ["list", {"path": "."}]]'
        terminal.line("!tool task " + json.dumps({"prompt": inner}))
        terminal.wait_for("+ list(")
        terminal.wait(lambda: terminal.prompt_line() == ">", what="the prompt")
        lines = [line.rstrip() for line in terminal.lines()]
        task = next(n for n, line in enumerate(lines) if "+ task(" in line)
        read = next(n for n, line in enumerate(lines) if "+ read(" in line)
        listed = next(n for n, line in enumerate(lines) if "+ list(" in line)
        assert lines[task].startswith("+ task(")
        assert task < read < listed
        assert lines[read] == "    + read(a.txt)"
        assert lines[listed] == "    + list(.)"
        assert lines[read + 1] == "      child-read-this"  # its folded output, under it
        assert lines[listed - 1] == "      ✓"
        marks = [line for line in lines[listed + 1 :] if line.lstrip().startswith("✓")]
        assert marks[:2] == ["      ✓", "  ✓"]  # the list's, then the task's at its level
    finally:
        terminal.close()
