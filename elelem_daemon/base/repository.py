"""The git repository a folder belongs to, found the same way everywhere: the nearest
folder, from it up (at most DEPTH of them), that holds a `.git` (a folder, or a file
naming one for a worktree or submodule)."""

from __future__ import annotations

from pathlib import Path

DEPTH = 64  # folders looked at, from the working folder up


def repository_top(cwd: Path) -> Path | None:
    folder = cwd
    for _ in range(DEPTH):
        if (folder / ".git").exists():
            return folder
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None
