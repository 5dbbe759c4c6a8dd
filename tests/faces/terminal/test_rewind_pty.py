"""`/undo` and `/rewind` in the terminal: the real `elelem chat` under a real pty, read
as a person sees its screen (tests/support/terminal.py)."""

from __future__ import annotations

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
        term.wait_for("[yes/no]")
        assert "Rewind to before turn 2?" in term.text() and "a.txt" in term.text()
        term.line("no")
        term.wait_for("not rewound")
        assert (project / "a.txt").read_text() == "two\n"
        (project / "made.txt").write_text("the user's own\n")  # an edit outside the agent
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/rewind 1")
        term.wait_for("Rewind to before turn 1?")
        term.wait(lambda: "[yes/no]" in term.prompt_line(), what="the question")
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
