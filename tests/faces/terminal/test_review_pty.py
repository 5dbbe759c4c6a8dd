"""The terminal's per-hunk review (faces/terminal/review.py), as a user meets it: `elelem
chat` under a real pseudo-terminal, with `write review` in the permissions file."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import struct
import sys
import termios
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

TIMEOUT = 30.0
TEN = "".join(f"line {i}\n" for i in range(1, 31))
THREE = TEN.replace("line 2\n", "LINE 2\n").replace("line 15\n", "LINE 15\n")
THREE = THREE.replace("line 28\n", "LINE 28\n")


class Pty:
    """`elelem chat` with the pty as its controlling terminal; read until text shows."""

    def __init__(self, process: asyncio.subprocess.Process, master: int) -> None:
        self.process, self.master, self.screen, self.seen = process, master, b"", 0

    @classmethod
    async def spawn(cls, env: dict[str, str], cwd: Path) -> Pty:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "elelem_daemon", "chat", "-p", "stub",
            stdin=slave, stdout=slave, stderr=slave, env=env, cwd=str(cwd),
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )  # fmt: skip
        os.close(slave)
        os.set_blocking(master, False)
        return cls(process, master)

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self.screen += data

    async def expect(self, text: str) -> str:
        """Wait until text shows after what the last expect saw; what showed up to it."""
        needle = text.encode()
        async with asyncio.timeout(TIMEOUT):
            while (found := self.screen.find(needle, self.seen)) < 0:
                self._drain()
                await asyncio.sleep(0.02)
        shown, self.seen = self.screen[self.seen : found + len(needle)], found + len(needle)
        return shown.decode("utf-8", "replace")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        os.close(self.master)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".config" / "elelem").mkdir(parents=True)
    (home / ".config" / "elelem" / "permissions").write_text("write review\nedit review\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    return {
        **base,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / "state"),
        "TERM": "xterm-256color",
    }


@pytest.fixture
async def chat(env: dict[str, str], tmp_path: Path) -> AsyncIterator[Pty]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text(TEN)
    terminal = await Pty.spawn(env, project)
    await terminal.expect("> ")
    yield terminal
    await terminal.close()


def write(content: str) -> str:
    return f"!tool write {json.dumps({'path': 'a.txt', 'content': content})}\r"


async def test_y_n_y_applies_the_first_and_last_hunks(chat: Pty, tmp_path: Path) -> None:
    chat.type(write(THREE))
    shown = await chat.expect("(1/3) Apply this hunk to a.txt [y,n,a,d,q,?]? ")
    assert "a.txt" in shown
    assert "\x1b[36m@@ -1,5 +1,5 @@\x1b[0m" in shown  # the hunk, coloured
    assert "\x1b[31m-line 2\x1b[0m" in shown and "\x1b[32m+LINE 2\x1b[0m" in shown
    chat.type("y\r")
    assert "+LINE 15" in await chat.expect("(2/3) Apply this hunk")
    chat.type("n\r")
    await chat.expect("(3/3) Apply this hunk")
    chat.type("y\r")
    await chat.expect("done.")
    expected = TEN.replace("line 2\n", "LINE 2\n").replace("line 28\n", "LINE 28\n")
    assert (tmp_path / "project" / "a.txt").read_text() == expected


async def test_help_then_a_takes_the_rest(chat: Pty, tmp_path: Path) -> None:
    chat.type(write(THREE))
    await chat.expect("(1/3) Apply this hunk")
    chat.type("n\r")
    await chat.expect("(2/3) Apply this hunk")
    chat.type("?\r")
    shown = await chat.expect("(2/3) Apply this hunk")
    assert "a - apply this hunk and all later hunks in the file" in shown
    chat.type("a\r")
    await chat.expect("done.")
    expected = TEN.replace("line 15\n", "LINE 15\n").replace("line 28\n", "LINE 28\n")
    assert (tmp_path / "project" / "a.txt").read_text() == expected


@pytest.mark.parametrize("key", ["d", "q"])
async def test_d_and_q_reject_the_rest(chat: Pty, tmp_path: Path, key: str) -> None:
    chat.type(write(THREE))
    await chat.expect("(1/3) Apply this hunk")
    chat.type(f"{key}\r")
    shown = await chat.expect("done.")
    assert "the user rejected the change" in shown  # the failed call's line
    assert (tmp_path / "project" / "a.txt").read_text() == TEN


async def test_a_file_changed_since_the_read_is_never_shown(chat: Pty, tmp_path: Path) -> None:
    path = tmp_path / "project" / "a.txt"
    script = json.dumps([["read", {"path": "a.txt"}], ["execute", {"command": "echo x >> a.txt"}],
                         ["write", {"path": "a.txt", "content": "new\n"}]])  # fmt: skip
    chat.type(f"!tools {script}\r")
    await chat.expect("Allow execute")  # execute asks (the default), then the write
    chat.type("y\r")
    shown = await chat.expect("done.")
    assert "conflict: the file changed since you read it; read it again" in shown
    assert "Apply this hunk" not in shown
    assert path.read_text() == TEN + "x\n"


async def test_a_file_changed_during_the_review_is_a_conflict(chat: Pty, tmp_path: Path) -> None:
    """The hunks no longer apply: someone wrote the file while the user was answering."""
    path = tmp_path / "project" / "a.txt"
    chat.type(write(THREE))
    await chat.expect("(1/3) Apply this hunk")
    path.write_text("someone else\n")
    chat.type("a\r")
    shown = await chat.expect("done.")
    assert "conflict: the file changed since you read it; read it again" in shown
    assert path.read_text() == "someone else\n"


async def test_the_input_ending_mid_review_applies_nothing(chat: Pty, tmp_path: Path) -> None:
    chat.type(write(THREE))
    await chat.expect("(1/3) Apply this hunk")
    chat.type("\x04")  # Ctrl-D: the answer ends before any hunk was answered
    shown = await chat.expect("done.")
    assert "not applied: the change needed the user's review, and no one answered" in shown
    assert (tmp_path / "project" / "a.txt").read_text() == TEN
