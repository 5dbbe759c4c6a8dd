"""Retention: which checkpoints go, by count and by age, and which shadow folders.

- A session keeps its last `keep` turns (`ELELEM_CHECKPOINTS_KEEP`); a turn's three refs
  (start, end, undo) go together.
- A checkpoint older than `days` (`ELELEM_CHECKPOINTS_DAYS`) goes.
- A folder's whole shadow repository goes when it was not used for `days` (its `cwd`
  file is touched at every use) or when the folder it names is gone.
- `session/delete` forgets a session's checkpoints at once (`Checkpoints.forget`).

The functions here only decide; `Checkpoints` deletes, off the turn's path.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

from .. import owned
from .git import GitError
from .lock import held
from .refs import turn_of

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
