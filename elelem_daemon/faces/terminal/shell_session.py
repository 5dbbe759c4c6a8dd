"""`/shell` in the terminal (builtins/shell_session.py): `$SHELL` (else `/bin/sh`) runs
under `script`, which lends it the terminal and records what it showed; when the shell
exits, the recording comes back as text (its last MAX_BYTES bytes, decoded as UTF-8
with replacement). The recording lives in a private folder (0700) removed afterwards.
None when `script` or the shell cannot run (the reason is said).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ...base import regular

MAX_BYTES = 1 << 20  # the end of the recording read back (the core caps it further)


async def run_shell(output: Any = None) -> str | None:
    def say(message: str) -> None:
        if output is not None:
            output.say(message, "error")

    script = shutil.which("script")
    if script is None:
        say("/shell needs `script` (util-linux, or bsdutils on Debian)")
        return None
    shell = os.environ.get("SHELL") or "/bin/sh"
    folder = Path(tempfile.mkdtemp(prefix="elelem-shell-"))
    log = folder / "typescript"
    if output is not None:
        output.say(f"  → {shell}: exit it to come back (its transcript is added)", "info")
    try:
        try:
            process = await asyncio.create_subprocess_exec(
                script, "-q", "-e", "-c", shell, str(log)
            )
            await process.wait()
        except OSError as exc:
            say(f"cannot run {shell} under script: {exc}")
            return None
        try:
            with open(regular.opened(log)[0], "rb") as file:  # a FIFO: no transcript
                size = file.seek(0, os.SEEK_END)
                file.seek(max(0, size - MAX_BYTES))
                return file.read().decode("utf-8", "replace")
        except OSError:
            return ""
    finally:
        shutil.rmtree(folder, ignore_errors=True)
