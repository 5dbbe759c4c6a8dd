"""The line editor's history: one file per project under the state folder.

`history_file(cwd)` is `<state_dir>/history/<folder name>-<hash of its path>`; the
folder and the file are private to the user (what is typed may hold secrets). The
format is prompt_toolkit's FileHistory (`# time` then `+line` per line of an entry).
Only the last MAX_BYTES of the file are read, and a file grown past twice that is cut
down to it, so the history stays bounded however long a project lives.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from prompt_toolkit.history import FileHistory

from ...base import regular
from ...base.config import state_dir

MAX_BYTES = 256 << 10


def history_file(cwd: Path) -> Path:
    digest = hashlib.sha256(str(cwd).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", cwd.name)[:40] or "root"
    return state_dir() / "history" / f"{name}-{digest}"


class ProjectHistory(FileHistory):
    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(str(path))

    def load_history_strings(self) -> Iterable[str]:
        try:
            with open(regular.opened(self.path)[0], "rb") as f:  # a FIFO: no history
                size = os.fstat(f.fileno()).st_size
                f.seek(max(0, size - MAX_BYTES))
                data = f.read(MAX_BYTES)
        except OSError:
            return []
        if size > MAX_BYTES:
            start = data.find(b"\n#")  # the first whole entry
            data = data[start + 1 :] if start >= 0 else b""
            if size > 2 * MAX_BYTES:
                self._rewrite(data)
        entries: list[str] = []
        lines: list[str] = []
        for raw in data.decode("utf-8", "replace").splitlines(keepends=True):
            if raw.startswith("+"):
                lines.append(raw[1:])
            elif lines:
                entries.append("".join(lines)[:-1])
                lines = []
        if lines:
            entries.append("".join(lines)[:-1])
        return list(reversed(entries))

    def store_string(self, string: str) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        except OSError:
            return  # the history is a convenience: a read-only state folder costs it
        lines = "".join(f"+{line}\n" for line in string.split("\n"))
        with os.fdopen(fd, "ab") as f:
            f.write(f"\n# {datetime.now()}\n{lines}".encode("utf-8", "replace"))

    def _rewrite(self, data: bytes) -> None:
        temporary = self.path.with_name(self.path.name + ".tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, self.path)
        except OSError:
            pass
