"""Kept: what a restore leaves exactly as it is, because no checkpoint holds it.

A checkpoint (the start of a turn) keeps every file git would see. What it leaves out
is the user's, as far as a rewind knows: a rewind only undoes what it saw the agent
change. So a path that was there, left out, when any of the undone turns began is
never deleted by the rewind, whatever the ignore rules say now (the agent may have
rewritten `.gitignore`, `info/exclude`, or removed a nested repository's `.git`), and
the plan names it with the reason (`Restored.kept`):

- over the size limit (`skipped` in the start's manifest);
- inside a nested repository (`nested`);
- ignored (`ignored`: what git listed as there and ignored; a folder ignored whole is
  one `name/` entry, so a path under it counts);
- the start's list was cut (`ignoredTruncated`): every deletion is kept.

A checkpoint taken before these lists were recorded has none: only the size limit is
known for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .manifest import Manifest


@dataclass
class LeftOut:
    """What the start of one undone turn left out."""

    turn: int
    skipped: frozenset[str]
    ignored: frozenset[str]  # files, and folders as `name/`
    nested: frozenset[str]  # `name/`
    truncated: bool
    at: float = 0.0  # when the turn began (unix seconds; 0: not recorded)

    @classmethod
    def of(cls, turn: int, manifest: Manifest, meta: dict[str, Any] | None = None) -> LeftOut:
        at = (meta or {}).get("at")
        return cls(
            turn,
            frozenset(manifest.skipped),
            frozenset(manifest.ignored or ()),
            frozenset(manifest.nested),
            manifest.ignored_truncated,
            float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0,
        )


def under(path: str, entries: frozenset[str]) -> bool:
    """`path` is an entry, or lies in a folder entry (`name/`)."""
    if path in entries:
        return True
    folder = path
    while "/" in folder:
        folder = folder.rpartition("/")[0]
        if folder + "/" in entries:
            return True
    return False


def reason(path: str, starts: list[LeftOut]) -> dict[str, object] | None:
    """Why a restore must leave `path` as it is, `{"reason", "turn"}` (the first undone
    turn that left it out), or None when a checkpoint knew it. `reason` is `too_big`,
    `nested`, `ignored` or `unlisted` (the start's list was cut)."""
    for start in starts:
        if path in start.skipped:
            return {"reason": "too_big", "turn": start.turn}
        if under(path, start.nested):
            return {"reason": "nested", "turn": start.turn}
        if under(path, start.ignored):
            return {"reason": "ignored", "turn": start.turn}
        if start.truncated:
            return {"reason": "unlisted", "turn": start.turn}
    return None


def big(starts: list[LeftOut]) -> dict[str, dict[str, object]]:
    """The files over the size limit when an undone turn began: left as they are."""
    found: dict[str, dict[str, object]] = {}
    for start in starts:
        for path in sorted(start.skipped):
            found.setdefault(path, {"reason": "too_big", "turn": start.turn})
    return found
