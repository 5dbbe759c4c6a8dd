"""Recovery: what a rewind deletes or overwrites, kept aside when it may hold bytes of
the user's that no checkpoint holds.

A checkpoint holds what git sees. What it left out (ignored, over the size limit,
inside a nested repository: kept.py) it cannot put back. When such a path was there
as an undone turn began and is gone now, the turn moved it or its bytes somewhere:
`mv .env config.env`, `mv .env keep/`, `cp .env x; rm .env`, `cat .env >> app.py;
rm .env`. That somewhere is a file the turn made or changed, exactly what a rewind
deletes or writes over. So then, before git's checkout, every file the rewind deletes
or overwrites is copied (a symlink as a symlink) into

    <state folder>/recovered/<session>-turn<N>[-K]/<its path>     (folders 0700)

and kept until the user deletes it. The plan names the folder (`recovery`), the files
(`recovered`: `{path, to}`) and what vanished (`vanished`). A copy that fails stops
the rewind before anything is touched (`io_error`).

A checkpoint lists a folder ignored whole (or a nested repository) as one `name/`
entry, not its files: such a folder counts as vanished when it is gone, or when it or
a folder in it had an entry added, removed or renamed since the turn began (a
folder's mtime; past WALK_BUDGET folders, or when that time is unknown, it counts).
A start whose list was cut (`ignoredTruncated`) counts too. Limits: this errs on the
side of keeping (a build writing into an ignored `build/` counts); a file in such a
folder emptied in place (`> secrets/key.pem`) is not a vanished one. Nothing is
copied when nothing vanished.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from . import manifest
from .copies import SOURCE
from .kept import LeftOut

COPIED = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
SHOWN_VANISHED = 20  # vanished paths named in a plan
WALK_BUDGET = 5000  # folders looked at, inside the left-out folders, per restore
SLACK = 1.0  # seconds: a folder's time is the kernel's coarse clock


def root_of(checkpoints_root: Path) -> Path:
    """`recovered/` beside `checkpoints/` in elelem's state folder."""
    return checkpoints_root.parent / "recovered"


def vanished(cwd: Path, starts: list[LeftOut]) -> list[str]:
    """What a start of an undone turn left out and may have lost since: a file gone, a
    folder (`name/`) gone or changed inside since the turn began (a folder's time
    moves when an entry in it is added, removed or renamed), `…` for a start whose
    list was cut (anything may have gone)."""
    found: list[str] = []
    seen: set[str] = set()
    budget = [WALK_BUDGET]
    for start in starts:
        since = start.at - SLACK if start.at else 0.0
        for entry in sorted({*start.skipped, *start.ignored, *start.nested}):
            path = entry.rstrip("/")
            if path in seen or not manifest.safe(path):
                continue
            seen.add(path)
            info = manifest.lstat(cwd, path)
            if info is None or (entry.endswith("/") and changed(cwd / path, since, budget)):
                found.append(entry)
        if start.truncated and "…" not in seen:
            seen.add("…")
            found.append("…")
    return found


def changed(folder: Path, since: float, budget: list[int]) -> bool:
    """Whether folder, or a folder in it (no symlink followed, no `.git`), had an entry
    added, removed or renamed since `since` (its mtime); True when that cannot be told:
    the time is unknown, or the walk passed its budget (shared by the calls)."""
    if not since:
        return True
    todo = [folder]
    while todo:
        budget[0] -= 1
        if budget[0] < 0:
            return True
        current = todo.pop()
        try:
            if os.stat(current, follow_symlinks=False).st_mtime >= since:
                return True
            with os.scandir(current) as listing:
                todo += [
                    Path(e.path) for e in listing
                    if e.name != ".git" and e.is_dir(follow_symlinks=False)
                ]  # fmt: skip
        except OSError:
            return True
    return False


def folder_for(root: Path, session: str, turn: int) -> Path:
    """The first free `<session>-turn<N>[-K]` under root."""
    base = f"{session}-turn{turn}"
    for n in range(1, 10_000):
        folder = root / (base if n == 1 else f"{base}-{n}")
        if not os.path.lexists(folder):
            return folder
    raise OSError(f"{root}: no free recovery folder for {base}")


def at_risk(cwd: Path, paths: list[str]) -> list[str]:
    """Those of paths there now as a file or a symlink (what a restore would lose)."""
    found = []
    for path in paths:
        info = manifest.lstat(cwd, path)
        if info is not None and (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            found.append(path)
    return sorted(set(found))


def keep(cwd: Path, paths: list[str], folder: Path) -> None:
    """Copy each of paths (relative to cwd, walked without following a symlink) into
    folder, which must not exist yet. OSError when one cannot be copied."""
    folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder.mkdir(mode=0o700)
    for path in paths:
        *parents, name = path.split("/")
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with manifest.folder(cwd, parents) as fd:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(name, dir_fd=fd), target)
                continue
            source = os.open(name, SOURCE, dir_fd=fd)
        with os.fdopen(source, "rb") as reading:
            if not stat.S_ISREG(os.fstat(source).st_mode):
                continue  # no longer a file: nothing of it to lose
            os.set_blocking(source, True)
            with os.fdopen(os.open(target, COPIED, 0o600), "wb") as writing:
                shutil.copyfileobj(reading, writing, 1 << 20)
                writing.flush()
                os.fsync(writing.fileno())
        os.chmod(target, stat.S_IMODE(info.st_mode) & 0o700 or 0o600)
