"""Retention: which checkpoints go, by count and by age, and which shadow folders.

- A session keeps its last `keep` turns (`ELELEM_CHECKPOINTS_KEEP`); a turn's three refs
  (start, end, undo) go together.
- A checkpoint older than `days` (`ELELEM_CHECKPOINTS_DAYS`) goes.
- A folder's whole shadow repository goes when it was not used for `days` (its `cwd`
  file is touched at every use) or when the folder it names is gone.
- `session/delete` forgets a session's checkpoints at once (`Checkpoints.forget`).

Pruning takes a session's oldest turns first, so what it took is one number per session,
the newest turn pruned: `note_pruned` keeps it in `<shadow>/pruned` (JSON) and
`pruned_turn` reads it. A rewind to a turn at or below it is refused: its checkpoint
is gone, and the first later one would not put back what the turns between changed.

The functions here only decide (and keep that note); `Checkpoints` deletes, off the
turn's path.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

from ..safety import owned
from .git import GitError
from .lock import held
from .refs import turn_of

MAX_NOTE = 1 << 20  # bytes of the `pruned` note read at most

DAY = 86_400.0


def expired(
    refs: list[tuple[str, str, int]], keep: int, days: float, now: float | None = None
) -> list[str]:
    """The refs to delete: beyond the last `keep` turns of a session, or too old."""
    now = time.time() if now is None else now
    turns: dict[str, set[int]] = {}
    for ref, _, _ in refs:
        if found := turn_of(ref):
            turns.setdefault(found[0], set()).add(found[1])
    kept = {session: set(sorted(ids)[-keep:]) for session, ids in turns.items()}
    old = {turn_of(ref) for ref, _, when in refs if when and now - when > days * DAY}
    gone = []
    for ref, _, _ in refs:
        found = turn_of(ref)
        if found and (found[1] not in kept[found[0]] or found in old):
            gone.append(ref)
    return gone


def note_pruned(folder: Path, turns: Iterable[tuple[str, int]]) -> None:
    """Remember the newest pruned turn of each session (blocking; under the lock)."""
    newest: dict[str, int] = {}
    for session, turn in turns:
        newest[session] = max(turn, newest.get(session, 0))
    if not newest or not folder.is_dir():
        return
    known = read_pruned(folder)
    for session, turn in newest.items():
        known[session] = max(turn, known.get(session, 0))
    write_pruned(folder, known)


def forget_pruned(folder: Path, session: str) -> None:
    known = read_pruned(folder)
    if known.pop(session, None) is not None:
        write_pruned(folder, known)


def pruned_turn(folder: Path, session: str) -> int:
    """The newest turn of `session` whose checkpoint was pruned (0: none)."""
    return read_pruned(folder).get(session, 0)


def read_pruned(folder: Path) -> dict[str, int]:
    try:
        data = json.loads(owned.read_owned(folder / "pruned", MAX_NOTE)[0])
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and type(v) is int}


def write_pruned(folder: Path, known: dict[str, int]) -> None:
    temp = folder / "pruned.tmp"
    with contextlib.suppress(OSError):
        temp.unlink(missing_ok=True)  # never written through a planted symlink
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(temp, flags, 0o600), "w") as file:
            file.write(json.dumps(known))
        os.replace(temp, folder / "pruned")


async def stale_folders(root: Path, days: float, now: float | None = None) -> list[Path]:
    """Remove the shadow folders not used for `days`, or whose folder is gone."""
    now = time.time() if now is None else now
    removed = []
    for marker in sorted(root.glob("*/cwd")) if root.is_dir() else []:
        folder = marker.parent
        try:
            used = marker.stat().st_mtime
            cwd = Path(owned.read_text(marker).strip())
        except OSError:
            continue
        if now - used <= days * DAY and cwd.is_dir():
            continue
        try:
            async with held(folder.with_suffix(".lock"), 1.0):  # not while it is in use
                await asyncio.to_thread(shutil.rmtree, folder, True)
        except GitError:
            continue
        removed.append(folder)
    return removed
