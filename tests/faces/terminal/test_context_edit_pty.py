"""`/context edit N` in the terminal (issue 20): the real `elelem chat` under a real pty
opens `$EDITOR` (a scripted one: it records what it was given and saves what the test
says), the saved text replaces the message, an empty save deletes it, and a failing
editor changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.terminal import Terminal

pytestmark = pytest.mark.e2e

EDITOR = """#!/bin/sh
cp "$1" "{seen}"
if [ -e "{fail}" ]; then exit 3; fi
cat "{next}" > "$1"
"""


def test_context_edit_opens_the_editor(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".config" / "elelem").mkdir(parents=True)
    project.mkdir()
    seen, fail, after = tmp_path / "seen", tmp_path / "fail", tmp_path / "next"
    editor = tmp_path / "editor.sh"
    editor.write_text(EDITOR.format(seen=seen, fail=fail, next=after))
    editor.chmod(0o755)
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "EDITOR": str(editor),
        "VISUAL": "",
    }
    terminal = Terminal("chat", cwd=project, env=env, lines=60)
    try:
        prompt = lambda: terminal.wait(lambda: terminal.prompt_line() == ">", what="prompt")  # noqa: E731
        prompt()
        terminal.line("!echo first reply")
        terminal.wait_for("first reply")
        prompt()
        terminal.line("!echo second reply")
        terminal.wait_for("second reply")
        prompt()
        after.write_text("an edited reply\n")
        terminal.line("/context edit 3")
        terminal.wait_for("→ edited message 3")
        assert seen.read_text() == "first reply"
        prompt()
        after.write_text("")
        terminal.line("/context edit 5")
        terminal.wait_for("→ deleted message 5 (the edit was empty)")
        prompt()
        fail.touch()
        terminal.line("/context edit 2")
        terminal.wait_for("the editor exited with 3: nothing changed")
        prompt()
        terminal.line("/context edit 1")
        terminal.wait_for("message 1 is the system prompt")
        prompt()
        terminal.line("/context")
        terminal.wait_for("4. user: !echo second reply")
        listing = terminal.text().rsplit("> /context\n", 1)[1]
        assert "3. assistant: an edited reply" in listing
        assert "2. user: !echo first reply" in listing
        assert "5." not in listing
    finally:
        terminal.close()
