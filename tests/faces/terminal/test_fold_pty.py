"""An edit's result in the terminal (issue 31, item 10): folded, it shows the changed
lines first, not the diff's headers; Ctrl-O at the prompt opens the whole result. The
real `elelem chat` under a real pty (tests/support/terminal.py)."""

from __future__ import annotations

from pathlib import Path

from support.terminal import Terminal


def test_an_edit_shows_its_changed_lines_and_ctrl_o_opens_it_whole(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (home / ".config" / "elelem").mkdir(parents=True)
    (project / "calc.py").write_text("".join(f"line {n}\n" for n in range(1, 12)))
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    term = Terminal("chat", cwd=project, env=env, lines=60)
    try:
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line('!tool edit {"path": "calc.py", "old": "line 6", "new": "LINE SIX"}')
        term.wait_for("✓")
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        lines = term.lines()
        at = next(i for i, line in enumerate(lines) if line.startswith("+ edit("))
        shown = lines[at + 1 : at + 4]
        assert shown[:2] == ["  -line 6", "  +LINE SIX"], lines[at : at + 8]
        assert shown[2].startswith("  … ") and "ctrl+o" in shown[2]
        assert "--- calc.py" not in term.text()  # the header is folded away
        term.send("\x0f")  # Ctrl-O
        term.wait_for("--- calc.py")
        whole = term.text()
        assert "@@" in whole and " line 5" in whole and "+LINE SIX" in whole
        term.wait(lambda: term.prompt_line() == ">", what="the prompt")
        term.line("/exit")
        assert term.exit_code() == 0
    finally:
        term.close()
