"""The check that no test writes to the user's real folders can fail
(tests/support/real_folders.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from support import real_folders

TESTS = Path(__file__).parent


def test_changes_name_what_appeared_changed_and_went(tmp_path):
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    before = real_folders.snapshot(env)
    state = tmp_path / "home" / ".local" / "state" / "elelem" / "sessions"
    state.mkdir(parents=True)
    (state / "s1.jsonl").write_text("{}\n")
    (tmp_path / "xdg" / "elelem").mkdir(parents=True)
    middle = real_folders.snapshot(env)
    found = real_folders.changes(before, middle)
    assert f"created  {state / 's1.jsonl'}" in found
    assert f"created  {tmp_path / 'xdg' / 'elelem'}" in found
    (state / "s1.jsonl").write_text("{}\n{}\n")
    os.utime(state / "s1.jsonl", ns=(1, 1))
    assert f"changed  {state / 's1.jsonl'}" in real_folders.changes(
        middle, real_folders.snapshot(env)
    )
    (state / "s1.jsonl").unlink()
    assert f"removed  {state / 's1.jsonl'}" in real_folders.changes(
        middle, real_folders.snapshot(env)
    )
    assert real_folders.changes(middle, middle) == []


def run_pytest(tmp_path: Path, body: str, fresh: bool = False) -> subprocess.CompletedProcess[str]:
    """A pytest session with our conftest, whose "real" HOME is a temp folder; with
    `fresh`, run as bin/test runs it (`real_folders.py fresh`: XDG_* folders of its own)."""
    real = tmp_path / "real-home"
    real.mkdir()
    test = tmp_path / "case" / "test_case.py"
    test.parent.mkdir()
    test.write_text(textwrap.dedent(body).replace("REAL", repr(str(real))))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ELELEM_"))}
    env.update(HOME=str(real), PYTHONPATH=str(TESTS))
    wrap = [sys.executable, str(TESTS / "support" / "real_folders.py"), "fresh"] if fresh else []
    return subprocess.run(
        [
            *wrap,
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "conftest",
            "-p",
            "no:cacheprovider",
            str(test),
        ],
        env=env,
        cwd=tmp_path / "case",
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_session_that_writes_to_the_real_folders_fails(tmp_path):
    done = run_pytest(
        tmp_path,
        """
        from pathlib import Path

        def test_leaks():  # HOME is a temp folder here; this writes where it was
            sessions = Path(REAL) / ".local" / "state" / "elelem" / "sessions"
            sessions.mkdir(parents=True)
            (sessions / "leak.jsonl").write_text("{}")
        """,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "the tests changed the user's real elelem folders:" in done.stdout
    assert "leak.jsonl" in done.stdout


def test_a_session_that_keeps_to_its_own_folders_passes(tmp_path):
    done = run_pytest(
        tmp_path,
        """
        import os
        from pathlib import Path

        def test_keeps_to_its_home():
            sessions = Path(os.environ["XDG_STATE_HOME"]) / "elelem" / "sessions"
            sessions.mkdir(parents=True)
            (sessions / "mine.jsonl").write_text("{}")
        """,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "real elelem folders" not in done.stdout


def test_bin_test_fails_a_run_that_writes_into_its_fresh_xdg_folders(tmp_path):
    """The fuzzing harness's old bug (issue 36): the caller's XDG_CONFIG_HOME, read
    before the per-test folders exist, handed to a process that writes there."""
    done = run_pytest(
        tmp_path,
        """
        import os, subprocess, sys

        CALLER = dict(os.environ)  # at import: before any test's own folders

        def test_hands_its_callers_folders_to_a_process():
            write = (
                "import os, pathlib; p = pathlib.Path(os.environ['XDG_CONFIG_HOME'], 'elelem');"
                "p.mkdir(parents=True); (p / 'trusted').write_text('/tmp/x')"
            )
            subprocess.run([sys.executable, "-c", write], env=CALLER, check=True)
        """,
        fresh=True,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "wrote into the run's own XDG folders:" in done.stderr
    assert "/xdg_config_home/elelem/trusted" in done.stderr


def test_bin_test_passes_a_run_that_keeps_to_the_tests_own_folders(tmp_path):
    done = run_pytest(
        tmp_path,
        """
        import os, subprocess, sys

        def test_hands_its_own_folders_to_a_process():
            write = (
                "import os, pathlib; p = pathlib.Path(os.environ['XDG_CONFIG_HOME'], 'elelem');"
                "p.mkdir(parents=True); (p / 'trusted').write_text('/tmp/x')"
            )
            subprocess.run([sys.executable, "-c", write], check=True)
        """,
        fresh=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "XDG folders" not in done.stderr


def test_own_gives_every_xdg_folder_under_the_home(tmp_path):
    caller = {"HOME": "/home/me", "XDG_CONFIG_HOME": "/home/me/.config", "PATH": "/bin"}
    env = real_folders.own(tmp_path, {**caller, "ELELEM_STATE_DIR": "/home/me/state"})
    assert env == {
        "HOME": str(tmp_path),
        "PATH": "/bin",
        "XDG_CONFIG_HOME": str(tmp_path / ".config"),
        "XDG_STATE_HOME": str(tmp_path / ".local/state"),
        "XDG_DATA_HOME": str(tmp_path / ".local/share"),
        "XDG_CACHE_HOME": str(tmp_path / ".cache"),
    }
