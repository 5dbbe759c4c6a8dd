"""Told: a rewind's plan (or what it did) in words, for the slash commands and the
confirmation every face shows (`/undo`, `/rewind N`). A deletion is named by the turn
that created the file; what no checkpoint holds is listed apart, with why it is left
as it is; what is kept aside before the rewind (checkpoints/recovery.py) is named with
where it goes. Every file name is shown with its control characters as escapes
(context/blocks.py `visible`, the one rule for names an editor or a turn made): a
newline or an ESC in a name neither breaks the question nor drives a terminal."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..context.blocks import visible

if TYPE_CHECKING:
    from .rewind import Rewound


WHY = {  # a `kept` entry's reason (checkpoints/kept.py) in words
    "too_big": "over the size limit (ELELEM_CHECKPOINTS_MAX_FILE) when turn {turn} began",
    "nested": "inside a nested repository when turn {turn} began",
    "ignored": "ignored when turn {turn} began",
    "unlisted": "the checkpoint of turn {turn} could not list all it left out",
}


def said(reason: object, turn: object) -> str:
    return WHY.get(str(reason), "not saved").format(turn=turn) + ": no checkpoint holds it"


def listed(paths: list[str], shown: int) -> str:
    """Paths on one line: a name's control characters as escapes (blocks.visible), so
    a newline or an ESC in a file name neither breaks nor drives what shows it."""
    names = ", ".join(visible(str(p)) for p in paths[:shown])
    return names + (f" (+{len(paths) - shown})" if len(paths) > shown else "")


def recovered(files: dict[str, Any], shown: int) -> list[str]:
    """What a rewind keeps aside (checkpoints/recovery.py): where, each file, and what
    the turn moved that it may hold."""
    entries = [e for e in files.get("recovered") or [] if isinstance(e, dict)]
    if not entries:
        return []
    folder = str(files.get("recovery") or "")
    name = folder.rpartition("/")[2]
    gone = listed([str(p) for p in files.get("vanished") or []], shown)
    lines = [f"  kept aside in {visible(folder)}, until you delete it:"]
    for entry in entries[:shown]:
        path = str(entry.get("path"))
        lines.append(
            f"    {visible(path)} → recovered/{visible(name)}/{visible(path)}: "
            f"may hold what the turn moved from {gone}"
        )
    if len(entries) > shown:
        lines.append(f"    (+{len(entries) - shown})")
    return lines


def describe(
    done: Rewound, shown: int = 20, number: Callable[[int], int | str] | None = None
) -> list[str]:
    """Lines saying what a rewind did or would do (the slash commands, the confirmation).
    A deletion is named by the turn that created the file; what no checkpoint holds is
    listed apart, with why it is left as it is. `number` names a turn as the user
    counts them (`user_number`)."""
    name = number or (lambda turn: turn)
    will = "would be" if done.dry_run else "were"
    gone = "would be deleted" if done.dry_run else "deleted"
    lines = []
    files = done.files
    if files is not None:
        for label, key in (("restored", "restored"), ("created again", "created")):
            if paths := files.get(key) or []:
                lines.append(f"  files {label}: {listed(paths, shown)}")
        makers: dict[int | None, list[str]] = {}
        made = files.get("createdBy") or {}
        for path in files.get("deleted") or []:
            makers.setdefault(made.get(path), []).append(path)
        for turn in sorted(t for t in makers if t is not None):
            lines.append(f"  created by turn {name(turn)} ({gone}): {listed(makers[turn], shown)}")
        if None in makers:
            lines.append(
                f"  made since, not by the agent's turns ({gone}): {listed(makers[None], shown)}"
            )
        if not any(files.get(k) for k in ("restored", "created", "deleted")):
            lines.append("  no file changed since that turn began")
        if files.get("outside"):
            lines.append(
                "  changed outside the agent since (your edits would be lost): "
                + listed(files["outside"], shown)
            )
        if files.get("unsaved"):
            lines.append(
                "  no checkpoint holds their current content (it would be lost): "
                + listed(files["unsaved"], shown)
            )
        if files.get("buffers"):
            lines.append(
                "  left by the agent in an editor buffer (reloaded from the disk): "
                + listed(files["buffers"], shown)
            )
        if files.get("uncovered"):
            lines.append("  left as they are (not saved): " + listed(files["uncovered"], shown))
        lines += recovered(files, shown)
        reasons: dict[str, list[str]] = {}
        for entry in files.get("kept") or []:
            turn = entry.get("turn")
            why = said(entry.get("reason"), name(turn) if isinstance(turn, int) else turn)
            reasons.setdefault(why, []).append(str(entry.get("path")))
        for why, paths in reasons.items():
            lines.append(f"  left as they are, {why}: {listed(paths, shown)}")
    if done.dropped is not None:
        count = len(done.dropped)
        verb = will if done.dry_run else "were" if count != 1 else "was"
        lines.append(
            f"  {count} turn{'s' if count != 1 else ''} {verb} dropped from the conversation"
        )
    return lines
