"""Watched: where the user's own files that decide what runs live, listed (bounded)
and read as hostile (vetted.py keeps what the user approved of them).

A file is read with the one bounded, non-blocking reader (base/regular.py: a FIFO is
refused, never waited on), links followed (dotfiles managers link plugins in), up to
FILE_CAP bytes (a larger one has no digest: it stays held). At most MAX_WATCHED files are
listed, and a skill's folder is walked SKILL_DEPTH folders down, links not followed.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..base import regular
from ..base.config import config_dir

FILE_CAP = 1 << 20  # bytes of one file hashed, at most (a larger one stays held)
MAX_WATCHED = 500  # files listed, at most
SKILL_DEPTH = 3  # folders below a skill's own


def folders() -> dict[str, Path]:
    """Where the user's files that decide what runs live (the loaders' own places)."""
    agents = Path.home() / ".agents"
    return {
        "plugins": agents / "plugins",
        "skills": agents / "skills",
        "modes": agents / "modes",
        "permissions": config_dir() / "permissions",
        "mcp": config_dir() / "mcp.json",
    }


def watched() -> list[tuple[Path, str]]:
    """The files watched now, with their kind (bounded: MAX_WATCHED)."""
    places = folders()
    found: list[tuple[Path, str]] = []
    found += [(p, "plugin") for p in _names(places["plugins"], ".py")]
    found += [(p, "mode") for p in _names(places["modes"], ".md")]
    for skill in _names(places["skills"], "", folders_too=True):
        found += [(p, "skill") for p in tree(skill)]
    for kind in ("permissions", "mcp"):
        if places[kind].is_file():
            found.append((places[kind], "rules" if kind == "permissions" else "MCP servers"))
    return found[:MAX_WATCHED]


def _names(folder: Path, suffix: str, folders_too: bool = False) -> list[Path]:
    try:
        names = sorted(os.listdir(folder))[:MAX_WATCHED]
    except OSError:
        return []
    paths = [folder / n for n in names if n.endswith(suffix) and not n.startswith(".")]
    if folders_too:
        return [p for p in paths if p.is_dir() and not p.is_symlink()]
    return [p for p in paths if not p.is_dir()]


def tree(folder: Path, depth: int = 0) -> list[Path]:
    """Every file under a skill's folder (bounded in depth and count)."""
    try:
        names = sorted(os.listdir(folder))[:MAX_WATCHED]
    except OSError:
        return []
    found: list[Path] = []
    for name in names:
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            if depth < SKILL_DEPTH:
                found += tree(path, depth + 1)
        else:
            found.append(path)
    return found[:MAX_WATCHED]


def digest(path: Path) -> tuple[str, int] | None:
    """sha256 and size of a regular file (links followed), None when it is not one,
    is unreadable or is larger than FILE_CAP."""
    data = read_bytes(path)
    return None if data is None else (hashlib.sha256(data).hexdigest(), len(data))


def read_bytes(path: Path) -> bytes | None:
    """A regular file's bytes (links followed) through the one bounded, non-blocking
    reader (base/regular.py: a FIFO is refused, never waited on); None for anything
    else, or a file past FILE_CAP."""
    try:
        data = regular.read(path, FILE_CAP + 1)
    except OSError:
        return None
    return None if len(data) > FILE_CAP else data
