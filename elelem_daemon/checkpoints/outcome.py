"""Outcome: what the checkpoint calls answer, as data a face can show or send.

Nothing here raises at a turn: a checkpoint that could not be taken is a `Saved` with
`ok: false`, a restore that could not be done a `Restored` with `ok: false`, each
with a `kind` for clients (`disabled`, `unavailable`, `unknown_checkpoint`, `busy`,
`timeout`, `git_failed`, `too_much_output`, `io_error`, `refused`, `tampered`,
`outside_changes`) and an `error` line.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Saved:
    """The answer of `begin` / `end`: a checkpoint taken, or why not."""

    ok: bool
    kind: str = "git"  # git | copy | off, or the error kind when not ok
    commit: str | None = None
    changed: int = 0  # files the checkpoint saw changed since the previous one
    skipped: list[str] = field(default_factory=list)  # left out for their size
    first: bool = False  # the first checkpoint of this folder (it costs the most)
    ms: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Checkpoint:
    """One listed checkpoint: the state before `turn`, and whether its end was seen."""

    session: str
    turn: int
    at: float  # unix seconds
    kind: str  # git | copy | lost (its end is kept, its start ref is gone or broken)
    ended: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Restored:
    """The answer of `restore`: what it changed (or, with dry_run, would change).

    `restored` are files rewritten to their checkpoint content or mode, `created` files
    the turn deleted, `deleted` files the turn created. `outside` lists the files among
    these that changed outside the agent's turns since the checkpoint (the user's own
    edits, or another session's): a face warns before a real restore. `unsaved` are
    files the restore overwrites though no checkpoint holds their current content (they
    grew past the size limit). `buffers` are files an undone turn's change was left
    in an editor's buffer (buffers.py): the editor reloads them from the disk (they are
    in `restored`, even when the disk held the checkpoint's text). `undo` names the
    checkpoint of the tree just before this restore, so the restore itself can be undone.
    `created_by` names, for a file in `deleted`, the undone turn whose end first held
    it. `kept` are the paths a restore leaves exactly as they are though the turns may
    have changed them, each `{"path", "reason", "turn"}`: what the checkpoint of the
    undone turn `turn` could not keep; `reason` is `too_big` (over the size limit),
    `ignored`, `nested` (inside a nested repository) or `unlisted` (its list was cut).
    `vanished` are such paths that were there as an undone turn began and are gone now
    (a folder left out whole: or changed inside): then every file the restore deletes
    or overwrites is first copied into the folder `recovery` (recovery.py), each named
    in `recovered` as `{"path", "to"}`. `marks`
    (not sent) is the stat of each `outside` and `unsaved` file as the plan saw it: a
    confirm goes on only while they are unchanged.
    """

    ok: bool
    dry_run: bool = False
    kind: str = "git"
    restored: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    dirs_created: list[str] = field(default_factory=list)
    dirs_removed: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    unsaved: list[str] = field(default_factory=list)
    uncovered: list[str] = field(default_factory=list)  # copy fallback: not saved, left as is
    buffers: list[str] = field(default_factory=list)  # left by an undone turn in a buffer
    kept: list[dict[str, object]] = field(default_factory=list)  # not touched, and why
    created_by: dict[str, int] = field(default_factory=dict)  # deleted: the turn that made it
    vanished: list[str] = field(default_factory=list)  # left out, there before, gone now
    recovered: list[dict[str, str]] = field(default_factory=list)  # {path, to}: kept aside
    recovery: str | None = None  # the folder they go to
    marks: dict[str, list[int]] = field(default_factory=dict)  # outside, unsaved: their stat
    undo: str | None = None
    ms: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
