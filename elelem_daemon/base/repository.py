"""The git repository a folder belongs to, found the same way everywhere: the nearest
folder, from it up (at most DEPTH of them), that holds a `.git` (a folder, or a file
naming one for a worktree or submodule).

A `.git` is taken only when it is safe, git's own `safe.directory` rule: the current
user owns it and it is not world-writable. Anyone can make `/tmp/.git`; a folder below
it is not in that repository for elelem (its branch is not named to the model, its
ignore patterns are not read), and the walk stops there. Where a `.git` file points
(`gitdir:`) is read with the bounded, non-blocking reader (base/regular.py).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import regular

DEPTH = 64  # folders looked at, from the working folder up
GITDIR_BYTES = 4096  # of a `.git` file


def repository_top(cwd: Path) -> Path | None:
    folder = cwd
    for _ in range(DEPTH):
        try:
            info = os.stat(folder / ".git")
        except (OSError, ValueError):
            info = None
        if info is not None:
            return folder if safe(info) else None
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None


def safe(info: os.stat_result) -> bool:
    """A `.git` of the current user's, not writable by everyone."""
    return info.st_uid == os.geteuid() and not info.st_mode & stat.S_IWOTH


def git_dir(top: Path) -> Path | None:
    """The repository folder of a working tree: `.git`, or where a `.git` file points
    (`gitdir: PATH`, relative to the tree); None when neither can be read."""
    dot = top / ".git"
    if dot.is_dir():
        return dot
    try:
        first = regular.text(dot, GITDIR_BYTES).strip().splitlines()
    except OSError:
        return None
    if not first or not first[0].startswith("gitdir:") or "\0" in first[0]:
        return None
    where = Path(first[0].removeprefix("gitdir:").strip())
    return where if where.is_absolute() else top / where
