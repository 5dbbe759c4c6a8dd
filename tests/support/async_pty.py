"""A face under a real pseudo-terminal, driven from asyncio: `elelem chat` as a user's
terminal runs it (its own session and controlling terminal, TERM and a size), read
until some bytes show, written to as typed, signalled and waited for. (The
synchronous pexpect + pyte helper that reads the screen as a person sees it is
support/terminal.py.)"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import re
import struct
import sys
import termios
from pathlib import Path

TIMEOUT = 30.0
# what a terminal acts on rather than shows: CSI and OSC sequences, other escapes, backspace
ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]|\x08")


class Terminal:
    def __init__(self, process: asyncio.subprocess.Process, master: int) -> None:
        self.process = process
        self.master = master
        self.screen = b""
        self.typed_at = 0  # where the screen was when the last keys were typed

    @classmethod
    async def spawn(cls, args: list[str], env: dict[str, str], cwd: Path) -> Terminal:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

        def controlling() -> None:  # in the child: the pty is its terminal
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "elelem_daemon",
            *args,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            # this pty answers no cursor-position request: prompt_toolkit must not wait for one
            env={
                **env,
                "TERM": "xterm-256color",
                "COLUMNS": "120",
                "LINES": "40",
                "PROMPT_TOOLKIT_NO_CPR": "1",
            },
            cwd=str(cwd),
            start_new_session=True,
            preexec_fn=controlling,
        )
        os.close(slave)
        os.set_blocking(master, False)
        return cls(process, master)

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except BlockingIOError:
                return
            except OSError:  # EIO: the other side is closed
                return
            if not data:
                return
            if b"\x1b[6n" in data:  # the line editor asks where the cursor is: answer
                os.write(self.master, b"\x1b[1;1R")
            self.screen += data

    async def expect(self, text: str, seconds: float = TIMEOUT) -> str:
        """Wait until text has shown (since the start), as written or once escape
        sequences are taken out; return all that showed, without them."""
        needle = text.encode()
        async with asyncio.timeout(seconds):
            while needle not in self.screen and text not in self.plain():
                self._drain()
                await asyncio.sleep(0.02)
        return self.plain()

    def plain(self, start: int = 0) -> str:
        """What showed (from byte `start`) without the escape sequences."""
        return ESCAPES.sub(b"", self.screen[start:]).decode("utf-8", "replace")

    async def prompt(self, seconds: float = TIMEOUT) -> str:
        """Wait until the REPL waits at its `>` prompt again, after the last keys typed;
        return all that showed, without escape sequences."""
        async with asyncio.timeout(seconds):
            while not self.plain(self.typed_at).rstrip().endswith(">"):
                self._drain()
                await asyncio.sleep(0.02)
        return self.plain()

    def type(self, text: str) -> None:
        self._drain()
        self.typed_at = len(self.screen)
        os.write(self.master, text.encode())

    async def wait(self, seconds: float = TIMEOUT) -> int:
        """The exit code (a negative one: killed by that signal)."""
        async with asyncio.timeout(seconds):
            while self.process.returncode is None:
                self._drain()
                try:
                    return await asyncio.wait_for(self.process.wait(), 0.1)
                except TimeoutError:
                    continue
        assert self.process.returncode is not None
        return self.process.returncode

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        os.close(self.master)
