"""A real editor in a tmux pane, driven by keystrokes and read from the screen: a private
tmux server (`-L`, no config), one session, `capture-pane` for what a person sees."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


class Pane:
    def __init__(self, command: list[str], cwd: Path, env: dict[str, str], name: str) -> None:
        self.socket = f"elelem-lsp-{name}-{os.getpid()}"
        script = cwd.parent / f"{name}.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        script.write_text(
            f"#!/bin/sh\n{exports}cd {shlex.quote(str(cwd))}\nexec {shlex.join(command)}\n"
        )
        script.chmod(0o755)
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "e", "-x", "110", "-y", "32",
                  str(script))  # fmt: skip

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        return done.stdout

    def screen(self, escapes: bool = False) -> str:
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "e")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "e", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "e", "-l", text)

    def wait(self, ready: Callable[[], object], seconds: float = 60.0, what: str = "") -> None:
        deadline = time.monotonic() + seconds
        while not ready():
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {seconds:g} s for {what}; screen:\n{self.screen()}")
            time.sleep(0.2)

    def wait_for(self, text: str, seconds: float = 60.0) -> None:
        self.wait(lambda: text in self.screen(), seconds, repr(text))

    def close(self) -> None:
        self.tmux("kill-server")
