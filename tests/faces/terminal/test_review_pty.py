"""The terminal's per-hunk review (faces/terminal/review.py), as a user meets it: `elelem
chat` under a real pty, read as a VT100 screen (support/terminal.py), with
`write review` in the permissions file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.terminal import Terminal

pytestmark = pytest.mark.e2e

TEN = "".join(f"line {i}\n" for i in range(1, 31))
THREE = TEN.replace("line 2\n", "LINE 2\n").replace("line 15\n", "LINE 15\n")
THREE = THREE.replace("line 28\n", "LINE 28\n")
CONFLICT = "conflict: the file changed since you read it; read it again"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text(TEN)
    return folder


@pytest.fixture
def chat(tmp_path: Path, project: Path):
    home = tmp_path / "home"
    (home / ".config" / "elelem").mkdir(parents=True)
    (home / ".config" / "elelem" / "permissions").write_text("write review\nedit review\n")
    environ = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    terminal = Terminal("chat", cwd=project, env=environ, lines=40)
    at_prompt(terminal)
    yield terminal
    terminal.close()


def at_prompt(terminal: Terminal, timeout: float = 30.0) -> None:
    terminal.wait(lambda: terminal.prompt_line() == ">", timeout, "an empty prompt")


def write(content: str) -> str:
    return f"!tool write {json.dumps({'path': 'a.txt', 'content': content})}"


def test_y_n_y_applies_the_first_and_last_hunks(chat: Terminal, project: Path) -> None:
    chat.line(write(THREE))
    chat.wait_for("(1/3) Apply this hunk to a.txt [y,n,a,d,q,?]?")
    assert "@@ -1,5 +1,5 @@" in chat.text() and "+LINE 2" in chat.text()
    assert b"\x1b[31m-line 2\x1b[0m" in chat.raw and b"\x1b[32m+LINE 2\x1b[0m" in chat.raw
    chat.line("y")
    chat.wait_for("(2/3) Apply this hunk")
    assert "+LINE 15" in chat.text()
    chat.line("n")
    chat.wait_for("(3/3) Apply this hunk")
    chat.line("y")
    chat.wait_for("done.")
    at_prompt(chat)
    expected = TEN.replace("line 2\n", "LINE 2\n").replace("line 28\n", "LINE 28\n")
    assert (project / "a.txt").read_text() == expected


def test_help_then_a_takes_the_rest(chat: Terminal, project: Path) -> None:
    chat.line(write(THREE))
    chat.wait_for("(1/3) Apply this hunk")
    chat.line("n")
    chat.wait_for("(2/3) Apply this hunk")
    chat.line("?")
    chat.wait_for("a - apply this hunk and all later hunks in the file")
    chat.line("a")
    chat.wait_for("done.")
    expected = TEN.replace("line 15\n", "LINE 15\n").replace("line 28\n", "LINE 28\n")
    assert (project / "a.txt").read_text() == expected


@pytest.mark.parametrize("key", ["d", "q"])
def test_d_and_q_reject_the_rest(chat: Terminal, project: Path, key: str) -> None:
    chat.line(write(THREE))
    chat.wait_for("(1/3) Apply this hunk")
    chat.line(key)
    chat.wait_for("the user rejected the change")  # the failed call's line
    chat.wait_for("done.")
    assert (project / "a.txt").read_text() == TEN


def test_a_file_changed_since_the_read_is_never_shown(chat: Terminal, project: Path) -> None:
    script = json.dumps([["read", {"path": "a.txt"}], ["execute", {"command": "echo x >> a.txt"}],
                         ["write", {"path": "a.txt", "content": "new\n"}]])  # fmt: skip
    chat.line(f"!tools {script}")
    chat.wait_for("never ›")  # execute asks (the default), then the write
    chat.send("y")
    chat.wait_for(CONFLICT)
    chat.wait_for("done.")
    assert "Apply this hunk" not in chat.text()
    assert (project / "a.txt").read_text() == TEN + "x\n"


def test_a_file_changed_during_the_review_is_a_conflict(chat: Terminal, project: Path) -> None:
    """The hunks no longer apply: someone wrote the file while the user was answering."""
    chat.line(write(THREE))
    chat.wait_for("(1/3) Apply this hunk")
    (project / "a.txt").write_text("someone else\n")
    chat.line("a")
    chat.wait_for(CONFLICT)
    assert (project / "a.txt").read_text() == "someone else\n"


def test_ctrl_c_mid_review_applies_nothing_and_cancels(chat: Terminal, project: Path) -> None:
    chat.line(write(THREE))
    chat.wait_for("(1/3) Apply this hunk")
    chat.send("\x03")  # no answer, as at any question: the turn stops
    at_prompt(chat, 10)
    assert "[cancelled]" in chat.lines()
    assert (project / "a.txt").read_text() == TEN
    chat.line("!echo still here")
    chat.wait_for("still here\n")


def test_yn_is_not_yes_it_asks_again(chat: Terminal, project: Path) -> None:
    """Issue 40: `yn` was taken as its first letter, yes. Only one key, or yes/no spelled
    out, answers; anything else shows the help and asks the same hunk again."""
    chat.line(write(THREE))
    chat.wait_for("(1/3) Apply this hunk")
    chat.line("yn")
    chat.wait_for("q - quit; do not apply this hunk or any of the remaining ones")
    assert "(2/3)" not in chat.text()
    chat.line("no")
    chat.wait_for("(2/3) Apply this hunk")
    chat.line("d")  # no more hunks of this file
    at_prompt(chat)
    assert (project / "a.txt").read_text() == TEN  # nothing applied
