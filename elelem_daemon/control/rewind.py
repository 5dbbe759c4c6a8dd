"""Rewind: a session goes back to before one of its turns, in its files, its
conversation, or both (docs/checkpoints.md). The one home of the rule, for every face
(`session/rewind` and `session/checkpoints` in the daemon, `/undo` and `/rewind`
everywhere):

- the turn must be one the session's conversation holds (UnknownTurn);
- nothing happens while a turn runs in the session, or in any session of the same
  folder, in this process or another (SessionBusy, naming that session): a restore
  under a running turn would mix the two;
- files: the session's Checkpointer (`session.checkpoints`, filled by the built-in
  plugin `builtins/checkpoints.py`) puts the tree back as it was before the turn,
  undoing the later turns too. Without `force`, files changed outside the agent since
  (the user's own edits) stop it before anything is touched: OutsideChanges carries the
  plan, so the face shows those files and asks, then goes on with `confirm`, the exact
  list the user agreed to lose (a file changed since the plan was shown stops it
  again); `dry_run` only answers the plan. What no checkpoint held (ignored, too big,
  a nested repository's) is never deleted: the plan lists it in `kept`;
- conversation: that turn and the later ones are dropped (`Conversation.rewind`; the
  store records the drop, so a reload agrees) and their checkpoints forgotten.

The files part runs first: when it fails, the conversation is left as it was.
`turns(session)` lists the turns a picker offers, oldest first. A turn's id (`turnId`)
counts the session's turns and commands together, for good; the user counts the turns
the conversation holds, 1, 2, 3 (`numbered`): every listing shows that `number`, and
`/rewind N` takes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from ..base.errors import InvalidParams, NoCheckpoint, SessionBusy, UnknownTurn
from ..conversation import text_of

if TYPE_CHECKING:
    from ..ports import Checkpointer, SessionView

PREVIEW = 80  # characters of a turn's prompt in a listing
MAX_CONFIRM = 10_000  # paths in a rewind's `confirm`
T = TypeVar("T")


@dataclass(frozen=True)
class Rewound:
    """What a rewind did (or, with `dry_run`, would do). `files` is the restore's
    answer (None when files were not asked for); `dropped` the turns the conversation
    lost (None when the conversation was not asked for)."""

    turn: int
    dry_run: bool
    files: dict[str, Any] | None
    dropped: list[int] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "turnId": self.turn,
            "dryRun": self.dry_run,
            "files": self.files,
            "conversation": None if self.dropped is None else {"dropped": self.dropped},
        }


NOTHING: dict[str, Any] = {  # a restore where no turn since changed files: nothing to put back
    "kind": "none",
    "restored": [],
    "created": [],
    "deleted": [],
    "createdBy": {},
    "kept": [],
    "dirsCreated": [],
    "dirsRemoved": [],
    "outside": [],
    "unsaved": [],
    "uncovered": [],
    "buffers": [],
    "vanished": [],
    "recovered": [],
    "recovery": None,
}


def last_turn(session: SessionView) -> int | None:
    """The newest turn still in the conversation (what `/undo` undoes)."""
    marks = session.conversation.marks
    return max(marks) if marks else None


def numbered(session: SessionView) -> dict[int, int]:
    """Each turn's number as the user counts them (turnId -> 1, 2, 3, ...): the turns
    the conversation holds with their prompt, oldest first."""
    held = [t for t in sorted(session.conversation.marks) if session.conversation.prompt_of(t)]
    return {turn: number for number, turn in enumerate(held, 1)}


def checkpointer(session: SessionView) -> Checkpointer | None:
    return getattr(session, "checkpoints", None)


def ensure_quiet(session: SessionView) -> None:
    """SessionBusy while a turn runs in this session or another of its folder."""
    if session.turn_id is not None:
        raise SessionBusy(
            f"session {session.id} is running turn {session.turn_id}: rewind when it is over",
            sessionId=session.id,
        )
    history = checkpointer(session)
    other = history.running() if history is not None else None
    if other is not None:
        raise SessionBusy(
            f"a turn is running in {session.cwd} (session {other}): rewind when it is over",
            sessionId=other,
        )


async def rewind(
    session: SessionView,
    turn: int,
    files: bool = True,
    conversation: bool = True,
    dry_run: bool = False,
    force: bool = False,
    confirm: list[str] | None = None,
) -> Rewound:
    """Go back to before `turn` (see the module's docstring for the rules). Once begun
    it cannot be cancelled (a restore cut short would leave the tree half-way): a
    cancel waits for its end (bounded by ELELEM_CHECKPOINTS_TIMEOUT) and is ignored."""
    if confirm is not None and (
        not isinstance(confirm, list)
        or len(confirm) > MAX_CONFIRM
        or not all(isinstance(p, str) for p in confirm)
    ):
        raise InvalidParams(
            f"confirm must be a list of at most {MAX_CONFIRM} paths",
            errors=["confirm: expected an array of strings"],
        )
    return await finish(_rewind(session, turn, files, conversation, dry_run, force, confirm))


async def finish(work: Awaitable[T]) -> T:
    """Await `work` to its end, whatever cancels the caller meanwhile (then ignored)."""
    task = asyncio.ensure_future(work)
    cancels = 0
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done():  # the work itself was cancelled: nothing to wait for
                raise
            cancels += 1
    me = asyncio.current_task()
    for _ in range(cancels):
        if me is not None and me.cancelling():
            me.uncancel()
    return result


async def _rewind(
    session: SessionView,
    turn: int,
    files: bool,
    conversation: bool,
    dry_run: bool,
    force: bool,
    confirm: list[str] | None = None,
) -> Rewound:
    if (
        isinstance(turn, bool)
        or not isinstance(turn, int)
        or turn not in session.conversation.marks
    ):
        held = ", ".join(str(t) for t in sorted(session.conversation.marks)) or "none"
        raise UnknownTurn(
            f"no turn {turn!r} in session {session.id} (its turns: {held})", turnId=turn
        )
    ensure_quiet(session)
    restored = None
    if files:
        history = checkpointer(session)
        if history is None or not history.enabled:
            raise NoCheckpoint(
                "checkpoints are off (ELELEM_CHECKPOINTS=0): the files cannot be rewound; "
                "rewind the conversation alone (files: false)",
                turnId=turn,
                reason="disabled",
            )
        restored = await history.restore(turn, dry_run, force, confirm)
    dropped = None
    if conversation:
        if dry_run:
            dropped = sorted(t for t in session.conversation.marks if t >= turn)
        else:
            dropped = session.conversation.rewind(turn)
            history = checkpointer(session)
            if history is not None:
                await history.forget(turn)
    return Rewound(turn, dry_run, restored, dropped)


async def turns(session: SessionView) -> list[dict[str, Any]]:
    """The turns of the conversation, oldest first: `{turnId, number, prompt, at,
    checkpoint, ended, files, filesTotal}`; `number` counts them as the user does (1, 2,
    3: `numbered`); `checkpoint` is `git`, `copy` or None (the turn changed no file
    through a tool, or checkpoints are off)."""
    history = checkpointer(session)
    listed = await history.listed() if history is not None and history.enabled else {}
    found = []
    numbers = numbered(session)
    for number, mark in sorted(session.conversation.marks.items()):
        prompt = session.conversation.prompt_of(number)
        if prompt is None or number not in numbers:  # cancelled before its prompt was kept
            continue
        saved = listed.get(number) or {}
        found.append(
            {
                "turnId": number,
                "number": numbers[number],
                "prompt": preview(prompt.get("content")),
                "at": iso(mark.at),
                "checkpoint": saved.get("kind"),
                "ended": bool(saved.get("ended", False)),
                "files": list(saved.get("files", [])),
                "filesTotal": int(saved.get("filesTotal", 0)),
            }
        )
    return found


def preview(content: Any) -> str:
    """A prompt's first line, cut to PREVIEW characters."""
    line = next((part.strip() for part in text_of(content).splitlines() if part.strip()), "")
    return line if len(line) <= PREVIEW else line[: PREVIEW - 1] + "…"


def iso(at: float) -> str:
    stamp = datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")
