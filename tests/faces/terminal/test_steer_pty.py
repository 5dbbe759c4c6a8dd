"""Steering in the terminal (issue 20), the real `elelem chat` under a real pty: a line
typed while a turn runs goes to that turn (so does `/steer TEXT`), the model reads it
after the tool round, and `/context` shows prompt, steer, reply. A slash command typed
during the turn waits for the next prompt, as does an unfinished line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.terminal import Terminal

pytestmark = pytest.mark.e2e


@pytest.fixture
def chat(tmp_path: Path):
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".config" / "elelem").mkdir(parents=True)
    (home / ".config" / "elelem" / "permissions").write_text("execute allow\n")
    project.mkdir()
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    terminal = Terminal("chat", cwd=project, env=env, lines=60)
    try:
        terminal.wait(lambda: terminal.prompt_line() == ">", what="the prompt")
        yield terminal, project
    finally:
        terminal.close()


def waiting(gate: Path) -> str:
    return "!tool execute " + json.dumps({"command": f"while [ ! -e {gate} ]; do sleep 0.05; done"})


def test_a_line_typed_during_a_turn_steers_it(chat) -> None:
    terminal, project = chat
    terminal.line(waiting(project / "gate"))
    terminal.wait_for("+ execute")
    terminal.send("also this\r")
    terminal.wait_for("steer queued: also this")
    (project / "gate").touch()
    terminal.wait_for("steered: also this. done.")
    terminal.wait(lambda: terminal.prompt_line() == ">", what="the prompt")
    terminal.line("/context")
    terminal.wait_for("4. assistant: steered: also this. done.")
    assert "3. user: also this" in terminal.text()


def test_slash_steer_and_what_waits_for_the_prompt(chat) -> None:
    terminal, project = chat
    terminal.line(waiting(project / "gate"))
    terminal.wait_for("+ execute")
    terminal.send("/steer by command\r")
    terminal.wait_for("steer queued: by command")
    terminal.send("/help\r")
    terminal.wait_for("commands wait for the prompt: /help")
    terminal.send("half a li\x7fine")  # no Enter: it waits at the prompt
    (project / "gate").touch()
    terminal.wait_for("steered: by command. done.")
    terminal.wait(lambda: "half a line" in terminal.prompt_line(), what="the leftover")
    assert "/help" in terminal.text().rsplit("steered: by command. done.", 1)[1]


def test_steer_at_the_prompt_says_how(chat) -> None:
    terminal, _ = chat
    terminal.line("/steer hello")
    terminal.wait_for("no turn is running: send the text as a prompt")
