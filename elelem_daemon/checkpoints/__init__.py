"""Checkpoints: every turn can be undone. The engine; the faces wire it (docs/checkpoints.md).

Before a turn that can change files the working tree is recorded in a shadow git
repository kept under the state folder, `<state>/checkpoints/<hash of the folder>/`,
never in the user's own repository (its history, branches, index, stash, reflog,
hooks and config are not touched, nor even read by git). Where git is missing the
file tools' writes are copied instead. A restore puts the tree back byte for byte,
executable bits, permission bits and empty folders included, and says which of the
files it touches were changed outside the agent since.

The calls, for the wiring (one `Checkpoints` per folder, shared by its sessions):

    checkpoints = for_cwd(session.cwd)                    # reads Settings.from_env()
    saved = await checkpoints.begin(session_id, turn_id)  # before the turn: the checkpoint
    ok = await checkpoints.before_write(session_id, turn_id, path)  # file tools, first
    saved = await checkpoints.end(session_id, turn_id)    # after it, even failed/cancelled
    plan = await checkpoints.restore(session_id, turn_id, dry_run=True)  # show, confirm
    done = await checkpoints.restore(session_id, turn_id)  # while no turn runs
    await checkpoints.forget(session_id)                  # session/delete
    await checkpoints.forget(session_id, since=turn_id)   # the turns a rewind dropped
    listed = await checkpoints.list(session_id)           # /rewind's picker
    await close_all()                                     # at shutdown

Every call answers data (`Saved`, `Restored`, `Checkpoint`, with `ok`, `kind`,
`error` and `to_dict()`); none raises into a turn. `turn_id` is an integer that stays
the same for a stored session across restarts; `session_id` is the session's id.

The names below load on first use (PEP 562), so that `checkpoints.settings` (what a
session's setup reads) can be imported without the engine and git's wiring: the
built-in plugin imports the engine at a session's first turn or rewind, off the path
to its first answer (bench/README.md, "What was fixed").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .checkpoints import Checkpoints, close_all, for_cwd
    from .outcome import Checkpoint, Restored, Saved
    from .settings import Settings

__all__ = ["Checkpoint", "Checkpoints", "Restored", "Saved", "Settings", "close_all", "for_cwd"]
_HOMES = {
    "Checkpoints": "checkpoints",
    "close_all": "checkpoints",
    "for_cwd": "checkpoints",
    "Checkpoint": "outcome",
    "Restored": "outcome",
    "Saved": "outcome",
    "Settings": "settings",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value
