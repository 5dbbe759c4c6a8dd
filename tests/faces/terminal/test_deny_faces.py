"""A deny rule holds in every face whatever the command's spelling (issue 36): the
15 spellings of `rm -f x` leave the file in place under `--deny 'execute:rm *'`, in
`elelem ask` (headless: refused, or exit 3 naming the command) and in the terminal
after an `always` answer (the daemon's case: tests/e2e/test_deny_always.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.spellings import SPELLINGS
from support.terminal import Terminal

pytestmark = pytest.mark.e2e
COMPUTED = "$(echo rm) -f x"  # the one the parser cannot tell: it asks
DENIED = [command for command in SPELLINGS if command != COMPUTED]


def folders(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    (project / "x").write_text("precious\n")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    (home / ".config" / "elelem").mkdir(parents=True)
    return project, env


def ask(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "ask", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")},
            **env,
            "ELELEM_PROVIDER": "stub",
        },
    )


def script(commands: list[str]) -> str:
    return "!tools " + json.dumps([["execute", {"command": c}] for c in commands])


RULES = ("--allow", "execute", "--deny", "execute:rm *")


def test_ask_refuses_every_spelling_the_parser_reads(tmp_path):
    """The issue's own command line: `elelem ask --allow execute --deny 'execute:rm *'`."""
    project, env = folders(tmp_path)
    done = ask(project, env, *RULES, script(DENIED))
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("Permission denied: execute") == len(DENIED), done.stderr
    assert (project / "x").read_text() == "precious\n"


def test_ask_stops_at_a_program_it_cannot_tell_and_names_it(tmp_path):
    project, env = folders(tmp_path)
    done = ask(project, env, *RULES, script([COMPUTED]))
    assert done.returncode == 3, done.stderr
    assert f"Allow execute: {COMPUTED}?" in done.stderr
    assert "cannot tell what it runs" in done.stderr
    assert "--allow 'execute:" not in done.stderr  # no pattern would cover it
    assert (project / "x").read_text() == "precious\n"


def test_ask_still_runs_other_commands_and_a_bare_allow_covers_an_interpreter(tmp_path):
    project, env = folders(tmp_path)
    done = ask(project, env, *RULES, script(["echo ran > out", "python3 -c 'print(42)'"]))
    assert done.returncode == 0, done.stderr
    assert (project / "out").read_text() == "ran\n"
    assert "42" in done.stderr


def test_ask_an_interpreter_past_a_deny_rule_exits_3_naming_it(tmp_path):
    """`--allow 'execute:python3*'` does not cover `python3 -c` while a deny rule exists."""
    project, env = folders(tmp_path)
    code = "python3 -c 'import os; os.remove(\"x\")'"
    done = ask(
        project, env, "--allow", "execute:python3*", "--deny", "execute:rm *", script([code])
    )
    assert done.returncode == 3, done.stderr
    assert f"Allow execute: {code}?" in done.stderr
    assert "runs code no rule sees" in done.stderr
    assert (project / "x").read_text() == "precious\n"


def test_ask_the_readme_ci_example_denies_editing_what_pytest_runs(tmp_path):
    """`--allow 'execute:pytest*' --deny write`: an `edit` of conftest.py is denied too."""
    project, env = folders(tmp_path)
    (project / "conftest.py").write_text("x = 1\n")
    edit = ["edit", {"path": "conftest.py", "old": "x = 1", "new": "import os"}]
    done = ask(
        project,
        env,
        "--allow",
        "execute:pytest*",
        "--deny",
        "write",
        "!tools " + json.dumps([edit]),
    )
    assert done.returncode == 0, done.stderr
    assert "Permission denied: edit" in done.stderr
    assert (project / "conftest.py").read_text() == "x = 1\n"


def test_ask_a_git_diff_that_writes_or_reads_outside_asks(tmp_path):
    project, env = folders(tmp_path)
    done = ask(project, env, "--allow", "execute:git diff*", script(["git diff --output=../x"]))
    assert done.returncode == 3, done.stderr
    assert not (tmp_path / "x").exists()
    done = ask(
        project, env, "--allow", "execute:git diff*", script(["git diff --no-index ../home x"])
    )
    assert done.returncode == 3, done.stderr


def at_prompt(terminal: Terminal) -> None:
    terminal.wait(lambda: terminal.prompt_line() == ">", 60, "an empty prompt")


def test_the_terminal_after_always_still_denies_and_asks_again(tmp_path):
    project, env = folders(tmp_path)
    terminal = Terminal("chat", "--deny", "execute:rm *", cwd=project, env=env)
    try:
        at_prompt(terminal)
        terminal.line('!tool execute {"command": "true"}')
        terminal.wait_for("y allow · n deny · a always · N never")
        terminal.send("a")
        terminal.wait_for("✓")
        at_prompt(terminal)
        asked = terminal.raw.count(b"Allow execute:")
        assert asked >= 1
        terminal.line(script(DENIED))
        terminal.wait(
            lambda: terminal.raw.count(b"Permission denied: execute") >= len(DENIED),
            120,
            "every spelling denied",
        )
        at_prompt(terminal)
        assert terminal.raw.count(b"Allow execute:") == asked  # denied, never asked
        terminal.line(script([COMPUTED]))
        terminal.wait_for("cannot tell what it runs")  # asked again despite `always`
        terminal.send("n")
        terminal.wait_for("User denied permission: execute")
        at_prompt(terminal)
        assert (project / "x").read_text() == "precious\n"
    finally:
        terminal.close()
