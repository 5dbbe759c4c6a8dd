"""Environment: where the agent runs, told to the model as elelem 0.10's templates did.

`Environment.here(cwd)` reads, once, when a session starts: the folder, the platform
and shell, the date, and the git branch. `render` is the block the system prompt
carries for the whole session, fixed so the prompt's prefix stays byte-stable (a
provider's prompt cache reuses it). What changes later (a new branch, another day) is
not put there: `changes` says it, and the transcript adds it to the newest user
message (transcript.py, "fresh notes").

`ELELEM_ENVIRONMENT=0` leaves the block out (`here` answers None): the prompt then
says nothing of the machine, as before elelem 0.10.

The branch is read from `.git/HEAD` (a worktree's `.git` file is followed), at most
HEAD_BYTES of it, with base/regular.py's reader (a FIFO or a device there is no
branch, never a wait): no git process is run, on the request's path or elsewhere.
"""

from __future__ import annotations

import datetime
import os
import platform
from dataclasses import dataclass
from pathlib import Path

from ..base import regular
from ..base.repository import git_dir, repository_top

HEAD_BYTES = 4096


@dataclass
class Environment:
    folder: str
    system: str
    shell: str
    date: str
    branch: str | None

    @classmethod
    def here(cls, cwd: Path) -> Environment | None:
        """The environment now, or None when ELELEM_ENVIRONMENT is `0` (or off, false, no)."""
        if os.environ.get("ELELEM_ENVIRONMENT", "1").strip().lower() in ("0", "off", "false", "no"):
            return None
        cwd = Path(cwd)
        system = f"{platform.system()} {platform.release()} ({platform.machine()})".strip()
        shell = os.environ.get("SHELL") or os.environ.get("COMSPEC") or "unknown"
        return cls(_escaped(str(cwd)), _printable(system), _printable(shell), today(), branch(cwd))

    def render(self) -> str:
        """The system prompt's block: the same text for the whole session."""
        lines = [
            "Environment (as the session started):",
            f"- working folder: {self.folder}",
            f"- platform: {self.system}; shell: {self.shell}",
            f"- date: {self.date}",
        ]
        if self.branch:
            lines.append(f"- git branch: {self.branch}")
        return "\n".join(lines)

    def changes(self) -> str:
        """What no longer holds of `render`, for the newest user message; empty when
        all still holds."""
        now = (branch(Path(self.folder)), today())
        notes = []
        if now[0] != self.branch:
            notes.append(f"the git branch is now {now[0] or '(none)'}")
        if now[1] != self.date:
            notes.append(f"today's date is {now[1]}")
        return f"Environment since the session started: {'; '.join(notes)}." if notes else ""


def today() -> str:
    return datetime.date.today().isoformat()


def branch(cwd: Path) -> str | None:
    """The branch checked out in the repository holding `cwd` (`detached at 1a2b3c4`
    for a detached HEAD), or None outside a repository or when it cannot be read. The
    repository is base/repository.py's (a `.git` of someone else's is none), HEAD is
    read with the bounded, non-blocking reader (a FIFO there is no branch)."""
    folder = repository_top(cwd)
    where = git_dir(folder) if folder is not None else None
    if where is None:
        return None
    try:
        text = regular.text(where / "HEAD", HEAD_BYTES).strip()
    except OSError:
        return None
    if text.startswith("ref:"):
        ref = text.removeprefix("ref:").strip()
        return _printable(ref.removeprefix("refs/heads/")) or None
    return f"detached at {_printable(text[:7])}" if text else None


def _escaped(text: str) -> str:
    """A path as one line: its control characters shown as escapes (`\\n`), never cut."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _printable(text: str) -> str:
    """A name as one short line: no control characters (a crafted HEAD file)."""
    return "".join(c for c in text if c.isprintable())[:200]
