"""`/shell` in the terminal (issue 20): the real `elelem chat` under a real pty runs
`$SHELL` under `script`; what the shell showed comes back as a user message, its
escape sequences out, and `/context` shows it. The editor faces say it is the
terminal's (tests/core: builtins/shell_session.py's cleaning and cap)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.terminal import Terminal

pytestmark = pytest.mark.e2e


def test_shell_transcript_becomes_a_user_message(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".config" / "elelem").mkdir(parents=True)
    project.mkdir()
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "SHELL": "/bin/sh",
        "PS1": "shell$ ",
        "ENV": "",
    }
    terminal = Terminal("chat", cwd=project, env=env, lines=60)
    try:
        terminal.wait(lambda: terminal.prompt_line() == ">", what="the prompt")
        terminal.line("/shell")
        terminal.wait_for("shell$")
        terminal.line("printf '\\033[31mred-%s\\033[0m\\n' hello")
        terminal.wait_for("red-hello")
        terminal.line("exit")
        terminal.wait_for("→ shell transcript added")
        terminal.wait(lambda: terminal.prompt_line() == ">", what="the prompt")
        terminal.line("/context 2")
        terminal.wait_for("The transcript of a shell session I ran")
        terminal.wait(lambda: terminal.prompt_line() == ">", what="the prompt")
        shown = terminal.text().rsplit("> /context 2", 1)[1]
        assert "red-hello" in shown
        terminal.line("/exit")
        assert terminal.exit_code() == 0
    finally:
        terminal.close()
    (stored,) = (home / ".local" / "state" / "elelem" / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in stored.read_text().splitlines()]
    (kept,) = [r for r in records if r["type"] == "message"]
    assert kept["role"] == "user" and kept["prompt"] is False  # no reply is due
    assert "red-hello" in kept["content"] and "exit" in kept["content"]
    assert "\x1b" not in kept["content"] and "\r" not in kept["content"]
    assert "Script started" not in kept["content"]
