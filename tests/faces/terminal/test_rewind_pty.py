"""`/undo` and `/rewind` in the terminal: the real `elelem chat` under a real pty, read
as a person sees its screen (tests/support/terminal.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from support.terminal import Terminal


def test_undo_and_rewind_in_the_terminal(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (home / ".config" / "elelem").mkdir(parents=True)
    (project / "a.txt").write_text("one\n")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    term = Terminal("chat", cwd=project, env=env, lines=60)
    try:
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line('!tool write {"path": "made.txt", "content": "x"}')
        term.wait(lambda: (project / "made.txt").exists(), what="the write")
        term.wait_for("done.")
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line('!tool edit {"path": "a.txt", "old": "one", "new": "two"}')
        term.wait(lambda: (project / "a.txt").read_text() == "two\n", what="the edit")
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/rewind")
        term.wait_for("/rewind N goes back to before turn N")
        listing = term.text()
        assert "made.txt" in listing and "(1 file)" in listing
        term.line("/undo")
        term.wait_for("[y/n]")
        assert "Rewind to before turn 2?" in term.text() and "a.txt" in term.text()
        term.line("n")
        term.wait_for("not rewound")
        assert (project / "a.txt").read_text() == "two\n"
        (project / "made.txt").write_text("the user's own\n")  # an edit outside the agent
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/rewind 1")
        term.wait_for("Rewind to before turn 1?")
        term.wait(lambda: "[y/n]" in term.prompt_line(), what="the question")
        assert "changed outside the agent" in term.text()
        term.line("yes")
        term.wait_for("2 turns were dropped from the conversation")
        assert "rewound to before turn 1" in term.text()
        assert not (project / "made.txt").exists()
        assert (project / "a.txt").read_text() == "one\n"
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/undo")
        term.wait_for("nothing to undo")
        term.line("/exit")
        assert term.exit_code() == 0
    finally:
        term.close()


def test_undo_of_a_turn_that_rewrote_gitignore_keeps_the_users_files(tmp_path: Path) -> None:
    """Issue 29: the model rewrites `.gitignore`; `/undo`, answered `y` as the permission
    question is, leaves `.env` and `local.sqlite` byte-identical, and the question
    named them as left alone, not as deleted."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (home / ".config" / "elelem").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text(".env\n*.sqlite\n")
    secret, db = b"API_TOKEN=the-users-own\n", bytes(range(256)) * 40
    (project / ".env").write_bytes(secret)
    (project / "local.sqlite").write_bytes(db)
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    term = Terminal("chat", cwd=project, env=env, lines=60)
    try:
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line('!tool write {"path": ".gitignore", "content": "node_modules/\\n"}')
        term.wait(lambda: "node_modules" in (project / ".gitignore").read_text(), what="write")
        term.wait_for("done.")
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/undo")
        term.wait(lambda: "[y/n]" in term.prompt_line(), what="the question")
        asked = term.text()
        assert "left as they are, ignored when turn 1 began" in asked
        assert ".env, local.sqlite" in asked and "deleted" not in asked
        term.line("maybe")  # neither yes nor no: asked again
        term.wait_for("answer y (yes) or n (no)")
        term.line("y")
        term.wait_for("rewound to before turn 1")
        assert (project / ".env").read_bytes() == secret
        assert (project / "local.sqlite").read_bytes() == db
        assert (project / ".gitignore").read_text() == ".env\n*.sqlite\n"
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/exit")
        assert term.exit_code() == 0
    finally:
        term.close()


def test_turns_are_numbered_as_the_user_counts_them(tmp_path: Path) -> None:
    """Issue 31, item 10: commands take ids too, yet `/rewind` lists the turns 1, 2 and
    `/rewind 2` is the second turn; the question names the turn that made a file."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (home / ".config" / "elelem").mkdir(parents=True)
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    term = Terminal("chat", cwd=project, env=env, lines=60)
    try:
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line('!tool write {"path": "one.txt", "content": "1"}')
        term.wait_for("done.")
        for command in ("/context", "/context"):  # ids 2 and 3
            term.wait(lambda: term.prompt_line() == ">", what="the prompt")
            term.line(command)
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line('!tool write {"path": "two.txt", "content": "2"}')
        term.wait(lambda: (project / "two.txt").exists(), what="the second write")
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/rewind")
        term.wait_for("/rewind N goes back")
        listing = term.text()
        rows = re.findall(r"^ +(\d+)  \d\d:\d\d  !tool write", listing, re.MULTILINE)
        assert rows == ["1", "2"], listing
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/rewind 2")
        term.wait(lambda: "[y/n]" in term.prompt_line(), what="the question")
        assert "Rewind to before turn 2?" in term.text()
        assert "created by turn 2 (would be deleted): two.txt" in term.text()
        term.line("y")
        term.wait_for("rewound to before turn 2")
        assert not (project / "two.txt").exists() and (project / "one.txt").exists()
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/exit")
        assert term.exit_code() == 0
    finally:
        term.close()
