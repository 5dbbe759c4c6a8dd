"""Changes: how a `write` or `edit` lands, reviewed or not, and what the model reads.

The one home of the rules every face follows (docs/permissions.md, "Review"):

1. **Conflicts first.** `Seen` remembers, per path, the digest of the text the agent
   read (or wrote) in this turn. When the file holds something else now, the change is
   refused as a conflict before anything is shown: no edit of the user's is
   overwritten. A file the agent did not read in this turn has no such check: `write`
   creates it or replaces what is there now, `edit` replaces its `old` text in what is
   there now (it must occur exactly once, which anchors it); a reviewer still sees the
   diff against the text as it is now.
2. **Then the change is cut into hunks** (hunks.py) and landed through `session.files`:
   - reviewed in the editor, when the policy says `review` and the files review
     (`Files.reviews`: the daemon face's client declared `files.review`);
   - else reviewed hunk by hunk through the Input, when it can (`Input.reviews`: the
     terminal, y/n/a/d/q), the accepted hunks then landed;
   - else landed as it is (`allow`, or the policy asked already: `review` without a
     reviewer is asked as `ask` is).
   "Accept every change for this turn" (`Seen.accept_all`) lands the later changes of
   the turn without review.
3. **What the editor answered is checked** (`verify`): known hunk ids, an outcome that
   matches them, and a text that is exactly the accepted hunks applied to the old text.
   Anything else is a clear failure, never a silent half-write.
4. **What the editor left is remembered** (`Seen.applied`): the text a change landed
   through the editor (reviewed there, or served by it), by path, for the turn's end
   checkpoint, which the disk alone does not tell while the buffer is unsaved
   (docs/checkpoints.md, "Editor buffers").
5. **The model reads exactly what happened** (`said`): the texts are the constants
   below; a partial acceptance is a success that names each rejected hunk and its
   lines, with the diff of what landed.
6. **What the model is told is true on disk**: after a change landed, the disk is
   checked (`on_disk`); when it does not hold the new text (the editor left it in an
   unsaved buffer), the result says so (`disk`: NOT_ON_DISK), since `grep`, `execute`
   and the other tools read the disk.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..io import ask
from .filesystem import FileState, digest_of
from .filesystem import snapshot as snapshot_of
from .hunks import Hunk, apply, split, unified, where

if TYPE_CHECKING:
    from ..ports import SessionView

log = logging.getLogger(__name__)

OUTCOMES = ("accepted", "partial", "rejected", "conflict")
CONFLICT = "conflict: the file changed since you read it; read it again"
REJECTED = "the user rejected the change"
ACCEPTED = "accepted by the user"
ACCEPTED_FOR_TURN = "accepted: the user accepts every change in this turn"
NOT_ON_DISK = (
    "not saved: the change is in the user's editor only, so tools that read the disk "
    "(grep, glob, execute) still see the old file until the user saves it"
)
NO_REVIEW = "not applied: the change needed the user's review, and no one answered"
UNKNOWN = (
    "the editor reported a result that is not the accepted hunks applied to the file "
    "({problem}); what the file holds now is unknown: read it again"
)
REASON_CAP = 2000  # characters of a reviewer's reason the model reads
REVIEW_OPTIONS = ["accept", "reject"]
_POISONED = "?"  # a digest no text has: the next change before a read is a conflict


@dataclass(frozen=True)
class Change:
    """A change to one file: from `base` (the file when the change was made) to `new`,
    cut into `hunks`. `shown` is the path as the model named it."""

    path: Path
    shown: str
    base: FileState
    new: str
    hunks: list[Hunk]

    @property
    def old(self) -> str | None:
        return self.base.text

    def ids(self) -> tuple[int, ...]:
        return tuple(hunk.id for hunk in self.hunks)

    def diff(self) -> str:
        return unified(self.old, self.new, self.shown, self.hunks)

    def details(self) -> dict[str, Any]:
        """What an Input is shown for a review (`kind: "review"`)."""
        return {
            "path": self.shown,
            "created": self.old is None,
            "hunks": [hunk.to_wire() for hunk in self.hunks],
            "diff": self.diff(),
        }


@dataclass(frozen=True)
class Outcome:
    """What became of a change. `outcome` is one of OUTCOMES, or `failed` (`reason`
    says why; `unknown`: the editor may have changed the file anyway). `text` is the
    file's text afterwards when something landed."""

    outcome: str
    accepted: tuple[int, ...] = ()
    text: str | None = None
    reason: str | None = None
    accept_all_for_turn: bool = False
    unknown: bool = False

    @property
    def landed(self) -> bool:
        return self.outcome in ("accepted", "partial")


class Conflict(Exception):
    """Raised before a question about a change (the permission policy's): the file
    changed since the agent read it, so nothing is shown."""


class BadAnswer(Exception):
    """A reviewer's answer that does not describe the change it was given."""


def verify(change: Change, outcome: Any, accepted: Any, text: Any) -> Outcome:
    """The Outcome an answer describes, checked against the change; BadAnswer otherwise."""
    if outcome not in OUTCOMES:
        raise BadAnswer(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r:.80}")
    if outcome in ("rejected", "conflict"):
        if accepted:
            raise BadAnswer(f"a {outcome} change accepts no hunks")
        return Outcome(outcome)
    ids = change.ids()
    if accepted is None and outcome == "accepted":
        accepted = list(ids)
    if not isinstance(accepted, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in accepted
    ):
        raise BadAnswer("acceptedHunks must be a list of hunk ids (integers)")
    unknown = sorted(set(accepted) - set(ids))
    if unknown:
        raise BadAnswer(f"no such hunk: {', '.join(map(str, unknown[:10]))}")
    if len(set(accepted)) != len(accepted):
        raise BadAnswer("acceptedHunks names a hunk twice")
    chosen = tuple(sorted(accepted))
    if outcome == "accepted" and chosen != ids:
        raise BadAnswer("an accepted change accepts every hunk (else it is partial)")
    if outcome == "partial" and not 0 < len(chosen) < len(ids):
        raise BadAnswer("a partial change accepts some hunks, not none or all")
    if not isinstance(text, str):
        raise BadAnswer("text (the file's content afterwards) must be a string")
    if text != apply(change.old, change.new, change.hunks, chosen):
        raise BadAnswer("text is not the accepted hunks applied to oldText")
    return Outcome(outcome, chosen, text)


def verdict_of(answer: str | None, change: Change) -> Outcome | None:
    """A terminal-style review answer: `accept`, `reject`, or `accept 1 3` (those hunks);
    None: no answer."""
    if answer is None:
        return None
    words = answer.replace(",", " ").split()
    if not words or words[0] != "accept":
        return Outcome("rejected")
    ids = change.ids()
    if len(words) == 1:
        return Outcome("accepted", ids)
    chosen = tuple(sorted({int(w) for w in words[1:] if w.isdigit() and int(w) in ids}))
    if not chosen:
        return Outcome("rejected")
    return Outcome("accepted" if chosen == ids else "partial", chosen)


class Seen:
    """What the agent saw of files in this turn (digest per path, None: no such file),
    and whether the user accepts every change for the rest of the turn."""

    def __init__(self) -> None:
        self._digests: dict[Path, str | None] = {}
        self.accept_all = False
        # the texts changes left through the editor this turn, by path (the `text` of
        # files/propose's answer): the turn's end checkpoint holds them, saved or not
        self.applied: dict[Path, str] = {}

    def new_turn(self) -> None:
        self._digests.clear()
        self.accept_all = False
        self.applied.clear()

    def record(self, path: Path, digest: str | None) -> None:
        self._digests[path] = digest

    def poison(self, path: Path) -> None:
        """The file may hold anything: the next change must follow a read."""
        self._digests[path] = _POISONED

    def saw(self, path: Path) -> bool:
        return path in self._digests

    def changed(self, path: Path, now: FileState) -> bool:
        """Whether the agent saw this path in this turn and it holds something else now."""
        return path in self._digests and self._digests[path] != now.digest


def reviewer(session: SessionView) -> str | None:
    """Who reviews a change hunk by hunk in this session: `editor` (its files), `input`
    (the terminal), or None (review is then asked as a permission)."""
    if getattr(session.files, "reviews", False):
        return "editor"
    if getattr(session.input, "reviews", False):
        return "input"
    return None


async def snapshot(session: SessionView, path: Path, errors: str = "strict") -> FileState:
    return await snapshot_of(session.files, path, errors)


async def check_fresh(session: SessionView, path: Path) -> None:
    """Conflict if the agent saw path in this turn and it holds something else now: what
    runs before a change is asked about (the policy's question), so none is shown."""
    if session.seen.saw(path) and session.seen.changed(
        path, await snapshot(session, path, "replace")
    ):
        raise Conflict(CONFLICT)


async def land(
    session: SessionView, path: Path, shown: str, base: FileState, new: str, review: bool
) -> dict[str, Any]:
    """Land `new` over `base` as the rules above say; the tool result the model reads."""
    seen: Seen = session.seen
    if seen.changed(path, base):
        return {"error": CONFLICT, "path": shown}
    if base.text == new:
        return {"bytes": len(new.encode("utf-8")), "path": shown, "diff": ""}
    change = Change(path, shown, base, new, await asyncio.to_thread(split, base.text, new))
    by = reviewer(session) if review and not seen.accept_all else None
    for_turn = review and seen.accept_all
    if by == "editor":
        outcome = await session.files.propose(change, review=True)  # type: ignore[attr-defined]
    elif by == "input":
        outcome = await _review_by_input(session, change)
    else:
        outcome = await _propose(session, change)
    if outcome.accept_all_for_turn and outcome.landed:
        seen.accept_all = True
    if outcome.landed and outcome.text is not None:
        seen.record(path, digest_of(outcome.text))
        if by == "editor" or base.editor:  # maybe in a buffer only, not on the disk
            seen.applied[path] = outcome.text
        else:
            seen.applied.pop(path, None)
    elif outcome.unknown:
        seen.poison(path)
    result = await said(change, outcome, reviewed=by is not None, for_turn=for_turn)
    if outcome.landed and outcome.text is not None and not await on_disk(path, outcome.text):
        result["disk"] = NOT_ON_DISK  # the editor kept it in a buffer: say so (rule 6)
    return result


async def on_disk(path: Path, text: str) -> bool:
    """Whether the disk holds exactly `text` (bounded: a file larger than the text is not read)."""

    def check() -> bool:
        data = text.encode("utf-8")
        try:
            if path.stat().st_size != len(data):
                return False
            with path.open("rb") as f:
                return f.read(len(data) + 1) == data
        except OSError:
            return False

    return await asyncio.to_thread(check)


async def _propose(session: SessionView, change: Change) -> Outcome:
    propose = getattr(session.files, "propose", None)
    if propose is not None:
        return await propose(change, review=False)  # type: ignore[no-any-return]
    await session.files.write_text(change.path, change.new)  # a plugin's plain Files
    return Outcome("accepted", change.ids(), change.new)


async def _review_by_input(session: SessionView, change: Change) -> Outcome:
    """Review through the Input (the terminal's y/n/a/d/q), then land what was accepted."""
    answer = await ask(
        session.input,
        f"Review {'the new file' if change.old is None else 'the change to'} {change.shown}",
        REVIEW_OPTIONS,
        kind="review",
        change=change.details(),
    )
    decided = verdict_of(answer, change)
    if decided is None:
        return Outcome("failed", reason=NO_REVIEW)
    if not decided.landed:
        return decided
    text = apply(change.old, change.new, change.hunks, decided.accepted)
    part = Change(
        change.path, change.shown, change.base, text,
        await asyncio.to_thread(split, change.old, text),
    )  # fmt: skip
    landed = await _propose(session, part)
    if not landed.landed:
        return landed
    return Outcome(decided.outcome, decided.accepted, text)


def rejected_text(change: Change, outcome: Outcome) -> str:
    """`applied 2 of 3 hunks; hunk 2 (lines 40–52) was rejected by the user`."""
    chosen = set(outcome.accepted)
    left = [h for h in change.hunks if h.id not in chosen]
    named = []
    for hunk in left:
        first, last = where(change.hunks, outcome.accepted, hunk)
        span = f"line {first}" if first == last else f"lines {first}–{last}"
        named.append(f"{hunk.id} ({span})")
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    which = f"hunk {listed} was" if len(left) == 1 else f"hunks {listed} were"
    return f"applied {len(chosen)} of {len(change.hunks)} hunks; {which} rejected by the user"


def _reason(outcome: Outcome) -> str:
    reason = (outcome.reason or "").strip()
    if len(reason) > REASON_CAP:
        reason = reason[: REASON_CAP - 1] + "…"
    return reason


async def said(
    change: Change, outcome: Outcome, reviewed: bool = False, for_turn: bool = False
) -> dict[str, Any]:
    """The tool result for a change's outcome (docs/permissions.md, "What the model reads")."""
    shown = change.shown
    if outcome.outcome == "conflict":
        return {"error": CONFLICT, "path": shown}
    if outcome.outcome == "rejected":
        reason = _reason(outcome)
        return {"error": f"{REJECTED}: {reason}" if reason else REJECTED, "path": shown}
    if outcome.outcome == "failed" or outcome.text is None:
        return {"error": _reason(outcome) or NO_REVIEW, "path": shown}
    text = outcome.text
    if outcome.outcome == "partial":
        diff = await asyncio.to_thread(unified, change.old, text, shown)
    else:
        diff = change.diff()
    result: dict[str, Any] = {"bytes": len(text.encode("utf-8")), "path": shown, "diff": diff}
    if outcome.outcome == "partial":
        note = rejected_text(change, outcome)
        reason = _reason(outcome)
        result["review"] = f"{note}; the user said: {reason}" if reason else note
    elif reviewed:
        result["review"] = ACCEPTED
    elif for_turn:
        result["review"] = ACCEPTED_FOR_TURN
    return result
