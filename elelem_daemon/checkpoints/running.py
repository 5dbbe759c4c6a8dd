"""Running: which turns run in a folder now, in this process and in other elelem processes.

A restore must not run under a turn (docs/checkpoints.md): the turn would go on from a
tree it did not leave, and its end snapshot would blame it for the restore. Each turn
holds a shared `flock` on `<state>/checkpoints/<hash>.turns` while it runs; a restore
asks for the exclusive lock without waiting, and fails to get it while any turn of the
folder runs, whichever process runs it. The kernel drops a dead process's locks. This
process's own turns are also known by session, so the refusal can name one.

With checkpoints off nothing is written: only this process's turns are known.

`of_folder(settings, cwd)` is the one `Running` of a folder in this process for those
settings: the folder's `Checkpoints` (`for_cwd`) uses it, and the built-in plugin
marks a turn with it without importing the engine, so a turn that changes no file
never loads git's wiring (bench/README.md, "What was fixed").
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .settings import Settings

log = logging.getLogger(__name__)
ELSEWHERE = ""  # running(): a turn of another elelem process


def folder_of(root: Path, cwd: Path) -> Path:
    """A folder's checkpoint folder under the state folder `root` (its shadow, copies;
    `<it>.turns` is the lock file of its running turns)."""
    return root / hashlib.sha256(os.fsencode(cwd)).hexdigest()[:32]


class Running:
    def __init__(self, lock_file: Path, shared: bool) -> None:
        self.lock_file = lock_file
        self.shared = shared  # hold the lock file (checkpoints on)
        self._turns: dict[tuple[str, int], int | None] = {}  # -> the fd holding LOCK_SH

    def started(self, session: str, turn: int) -> None:
        fd = None
        if self.shared:
            try:
                self.lock_file.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(
                    self.lock_file, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
                )
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:  # a restore is checking right now: it saw no turn
                    fcntl.flock(fd, fcntl.LOCK_SH)  # it holds the lock for a moment only
            except OSError as exc:
                log.info("checkpoints: cannot mark a running turn in %s: %s", self.lock_file, exc)
                if fd is not None:
                    os.close(fd)
                fd = None
        self._turns[(session, turn)] = fd

    def ended(self, session: str, turn: int) -> None:
        fd = self._turns.pop((session, turn), None)
        if fd is not None:
            os.close(fd)  # drops the shared lock

    def running(self, besides: str | None = None) -> str | None:
        """A session whose turn runs in the folder (not `besides`): its id for one of
        this process, ELSEWHERE for another process's; None when none runs."""
        for session, _ in self._turns:
            if session != besides:
                return session
        if not self.shared or any(fd is not None for fd in self._turns.values()):
            return None  # our own turn's lock would hide the others': asked for above
        try:
            fd = os.open(self.lock_file, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None  # never made: no turn ever ran here
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return ELSEWHERE
        except OSError:
            return None
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)
        return None


_folders: dict[tuple[Settings, Path], Running] = {}


def of_folder(settings: Settings, cwd: Path) -> Running:
    """The one `Running` of the folder `cwd` (resolved) in this process, for `settings`."""
    key = (settings, cwd)
    found = _folders.get(key)
    if found is None:
        found = _folders[key] = Running(
            folder_of(settings.root, cwd).with_suffix(".turns"), settings.enabled
        )
    return found
