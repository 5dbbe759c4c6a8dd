"""The launcher's own edges (issue 36): `elelem trust` in a folder the trusted-folders
file cannot name refuses, and `elelem sessions` into a reader that went away ends
quietly, as `ls` does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.real_folders import own


def elelem(home: Path, cwd: Path, *args: str, **options: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "elelem_daemon", *args],
        env={**own(home), "ELELEM_PROVIDER": "stub"},
        cwd=cwd,
        timeout=60,
        **options,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("name", ["two\nlines", "ends\r", "a\u2028b", "trailing "])
def test_trust_refuses_a_folder_the_file_cannot_name(
    isolated_home: Path, tmp_path: Path, name: str
) -> None:
    folder = tmp_path / name
    folder.mkdir()
    done = elelem(isolated_home, folder, "trust", capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"elelem: {str(folder)!r} is not trusted: its name ")
    assert "Traceback" not in done.stderr
    trusted = isolated_home / ".config" / "elelem" / "trusted"
    assert not trusted.exists() or str(tmp_path) not in trusted.read_text()


def test_trust_still_keeps_an_ordinary_folder(isolated_home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "plain project"
    folder.mkdir()
    done = elelem(isolated_home, folder, "trust", capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith(f"Trusted {folder} ")
    trusted = isolated_home / ".config" / "elelem" / "trusted"
    assert trusted.read_text().splitlines() == [str(folder)]


def into_a_closed_pipe(command: list[str], **options: object) -> subprocess.CompletedProcess:
    """Run command with its stdout a real pipe whose reader already went away."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            command,
            stdout=writer,
            stderr=subprocess.PIPE,
            timeout=60,
            **options,  # type: ignore[arg-type]
        )
    finally:
        os.close(writer)


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_sessions_into_a_reader_that_went_away_ends_quietly_as_ls_does(
    isolated_home: Path, tmp_path: Path, unbuffered: str
) -> None:
    done = elelem(isolated_home, tmp_path, "ask", "hello", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    listed = elelem(isolated_home, tmp_path, "sessions", capture_output=True, text=True)
    assert "hello" in listed.stdout  # there is something to write
    env = {**own(isolated_home), "ELELEM_PROVIDER": "stub", "PYTHONUNBUFFERED": unbuffered}
    for command in (["sessions"], ["--help"], ["help"]):  # written at once, or at exit
        argv = [
            sys.executable,
            "-c",
            "import sys; from elelem_daemon.cli import main; sys.exit(main())",
            *command,
        ]
        piped = into_a_closed_pipe(argv, env=env, cwd=tmp_path)
        assert piped.stderr == b"", command  # no traceback, no "Exception ignored"
        # argparse's help ignores a write error itself: 0 when nothing was left to flush
        quiet = (128 + signal.SIGPIPE,) if command == ["sessions"] else (0, 128 + signal.SIGPIPE)
        assert piped.returncode in quiet, command
    ls = into_a_closed_pipe(["sh", "-c", "ls /; echo $? >&2"])
    assert ls.stderr.strip() == str(128 + signal.SIGPIPE).encode()  # how other CLIs end
