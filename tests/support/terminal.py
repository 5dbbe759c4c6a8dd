"""A real terminal for tests: `elelem` under a pty (pexpect), its output fed to a
VT100 screen (pyte), so a test reads what a person would see, and counts how often
that changed.

`Terminal.wait_for(text)` polls until the screen shows `text`; `states` is every
distinct screen seen so far, with the time it was first seen (toolchain.md §10).
Keys are sent as a terminal sends them: Ctrl-C is `\\x03`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte

COLUMNS, LINES = 100, 30


class Terminal:
    def __init__(
        self,
        *args: str,
        cwd: Path,
        env: dict[str, str] | None = None,
        columns: int = COLUMNS,
        lines: int = LINES,
    ) -> None:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
        environ.update(
            TERM="xterm-256color",
            COLUMNS=str(columns),
            LINES=str(lines),
            ELELEM_PROVIDER="stub",
            **(env or {}),
        )
        environ.pop("NO_COLOR", None)
        self.screen = pyte.Screen(columns, lines)
        self.screen.write_process_input = self.send  # answers what a terminal answers (CPR)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        self.states: list[tuple[float, str]] = []
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "elelem_daemon", *args],
            cwd=str(cwd),
            env=environ,
            dimensions=(lines, columns),
        )

    # -- reading ----------------------------------------------------------------------
    def pump(self, timeout: float = 0.02) -> None:
        """Feed what the program wrote (if anything) to the screen."""
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return
        except pexpect.EOF:
            time.sleep(timeout)
            return
        self.raw += data
        self.stream.feed(data)
        text = self.text()
        if not self.states or self.states[-1][1] != text:
            self.states.append((time.monotonic(), text))

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip()

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def wait(self, ready: Callable[[], bool], timeout: float = 30.0, what: str = "") -> None:
        end = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.text()}")
            self.pump()
        self.pump(0)

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        self.wait(lambda: text in self.text(), timeout, repr(text))

    def prompt_line(self) -> str:
        """The line the cursor is on."""
        return self.screen.display[self.screen.cursor.y].rstrip()

    # -- writing ----------------------------------------------------------------------
    def send(self, keys: str) -> None:
        self.child.send(keys)

    def line(self, text: str) -> None:
        """Type a line and Enter."""
        self.child.send(text + "\r")

    # -- the end ----------------------------------------------------------------------
    def exit_code(self, timeout: float = 15.0) -> int:
        end = time.monotonic() + timeout
        while self.child.isalive():
            if time.monotonic() > end:
                raise AssertionError(f"still running; screen:\n{self.text()}")
            self.pump()
        self.pump(0)
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -1

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
