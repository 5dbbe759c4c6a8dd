"""`$EDITOR` on a text, for `/context edit` (builtins/context_edit.py) in the terminal.

The text goes to a file of its own in a new private folder (mode 0700), `$VISUAL` or
`$EDITOR` (split as a shell would; `vi` when neither is set) runs on it with the
terminal as its own, and what it saved comes back. None when the editor could not run
or exited with an error (the message is said): nothing changes then. A saved file
over MAX_BYTES is refused the same way. The folder is removed afterwards.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ...base import regular

MAX_BYTES = 1 << 20


async def edit_text(text: str, name: str, output: Any = None) -> str | None:
    def say(message: str) -> None:
        if output is not None:
            output.say(message, "error")

    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        say(f"$EDITOR is not a command line: {exc}")
        return None
    if not argv:
        say("$EDITOR is empty")
        return None
    folder = Path(tempfile.mkdtemp(prefix="elelem-edit-"))
    try:
        path = folder / f"{name}.md"
        path.write_text(text, encoding="utf-8")
        try:
            process = await asyncio.create_subprocess_exec(*argv, str(path))
            code = await process.wait()
        except OSError as exc:
            say(f"cannot run the editor {argv[0]}: {exc}")
            return None
        if code != 0:
            say(f"the editor exited with {code}: nothing changed")
            return None
        if path.stat().st_size > MAX_BYTES:
            say(f"the saved text is over {MAX_BYTES} bytes: nothing changed")
            return None
        saved = regular.text(path, MAX_BYTES)  # never waits on a FIFO
        return saved[:-1] if saved.endswith("\n") and not text.endswith("\n") else saved
    finally:
        shutil.rmtree(folder, ignore_errors=True)
