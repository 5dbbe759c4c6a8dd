"""Refs: how a checkpoint is named in the shadow repository, and which ids may name one.

    refs/elelem/<session>/<turn>        the tree before the turn (the checkpoint)
    refs/elelem-end/<session>/<turn>    the tree when the turn ended
    refs/elelem-undo/<session>/<turn>   the tree just before a restore to that turn

`HEAD` (`refs/heads/main`) follows the last snapshot of any session: the shadow's
index holds the same tree, which is what makes the next snapshot cheap.
"""

from __future__ import annotations

import re

START, END, UNDO = "refs/elelem", "refs/elelem-end", "refs/elelem-undo"
SESSION = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a session id that can name a ref
MAX_TURN = 2**31


def ref(kind: str, session: str, turn: int) -> str:
    return f"{kind}/{session}/{turn}"


def turn_of(name: str) -> tuple[str, int] | None:
    """(session, turn) of `refs/elelem*/<session>/<turn>`."""
    parts = name.split("/")
    if len(parts) != 4 or not parts[1].startswith("elelem") or not parts[3].isdigit():
        return None
    return parts[2], int(parts[3])


def bad_ids(session: object, turn: object) -> str | None:
    """Why these ids cannot name a checkpoint, or None."""
    if not isinstance(session, str) or not SESSION.fullmatch(session):
        return f"invalid session id for a checkpoint: {session!r}"
    if isinstance(turn, bool) or not isinstance(turn, int) or not 0 <= turn < MAX_TURN:
        return f"invalid turn id for a checkpoint: {turn!r}"
    return None
