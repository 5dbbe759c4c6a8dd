"""`elelem ask` in a script (no terminal to ask on): `--allow` and `--deny` decide
ahead, and a question no one can answer ends the run with exit 3 and says why on
stderr (README, "elelem ask in a script"; docs/permissions.md)."""

import os
import subprocess
import sys

ECHO = '!tool execute {"command":"echo hi"}'


def ask(folder, *args):
    return subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "ask", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")},
            "ELELEM_PROVIDER": "stub",
        },
    )


def test_allow_runs_the_command_without_asking(tmp_path):
    done = ask(tmp_path, "--allow", "execute:echo*", ECHO)
    assert done.returncode == 0, done.stderr
    assert "hi" in done.stderr.splitlines()[-3:] or "  hi" in done.stderr
    assert done.stdout == "done.\n"


def test_without_the_flag_it_says_why_and_exits_3(tmp_path):
    done = ask(tmp_path, ECHO)
    assert done.returncode == 3, done.stderr
    assert (
        "elelem: needs approval, and there is no terminal to ask on: Allow execute: echo hi?"
        in (done.stderr)
    )
    assert "--allow 'execute:echo hi'" in done.stderr
    assert "done." not in done.stdout  # the turn stopped at the question


def test_a_compound_command_is_not_covered_by_an_allow_pattern(tmp_path):
    done = ask(tmp_path, "--allow", "execute:echo*", '!tool execute {"command":"echo hi; touch x"}')
    assert done.returncode == 3
    assert not (tmp_path / "x").exists()


def test_deny_refuses_and_the_model_reads_it(tmp_path):
    done = ask(tmp_path, "--deny", "execute", "--allow", "*", ECHO)
    assert done.returncode == 0, done.stderr
    assert "Permission denied: execute" in done.stderr


def test_a_bad_pattern_is_a_usage_error(tmp_path):
    done = ask(tmp_path, "--allow", ":echo", ECHO)
    assert done.returncode == 2
    assert "expected a tool name or glob" in done.stderr
