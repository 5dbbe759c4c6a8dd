"""The terminal's review of a change, hunk by hunk, as `git add -p` asks.

The terminal's Input calls `review` for a question of kind `review` (changes.py asks
it when the permission policy says `review` and no editor reviews). Each hunk is shown
as a coloured diff, then one answer:

    y  apply this hunk            n  do not apply this hunk
    a  this hunk and all later    d  not this hunk, nor any later
    q  quit: do not apply this hunk or any of the remaining ones
    ?  help

(With one file per change, `d` and `q` do the same, as in `git add -p` for one file.)
Anything else shows the help and asks again. The path and the hunks are made visible
(visible.py): a control character in the model's text is shown, never obeyed.
The answer is changes.py's: `accept` with the ids of the accepted hunks, `reject`, or
None when the input ended before any hunk was answered (no one answered: Ctrl-C or
Ctrl-D on a terminal, which then cancels the turn, as at any question).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .console import CYAN, RESET, painted_diff
from .visible import visible

KEYS = "y,n,a,d,q,?"
HELP = """y - apply this hunk
n - do not apply this hunk
a - apply this hunk and all later hunks in the file
d - do not apply this hunk or any of the later hunks in the file
q - quit; do not apply this hunk or any of the remaining ones
? - print help"""

Read = Callable[[str], Awaitable[str | None]]


async def review(
    change: dict[str, Any], read: Read, show: Callable[[str], None], color: bool
) -> str | None:
    """Ask about each hunk of `change` (`changes.Change.details()`); the answer."""
    hunks = [h for h in change.get("hunks") or [] if isinstance(h, dict)]
    path = visible(str(change.get("path", "?")))  # the model's text: made visible
    head = f"{'new file ' if change.get('created') else ''}{path}"
    show(f"{CYAN}{head}{RESET}" if color else head)
    if not hunks:  # an empty new file: nothing to cut, one question
        while True:
            line = await read(f"(1/1) Create {path}, empty [y,n]? ")
            if line is None:
                return None
            if (key := one_key(line)) in ("y", "n"):
                return "accept" if key == "y" else "reject"
            show(HELP)
    accepted: list[int] = []
    answered = False
    at = 0
    while at < len(hunks):
        hunk = hunks[at]
        show(painted_diff(str(hunk.get("diff", "")).rstrip("\n"), color))
        while True:
            line = await read(f"({at + 1}/{len(hunks)}) Apply this hunk to {path} [{KEYS}]? ")
            if line is None:  # the input ended: what was answered stands
                return _answer(accepted) if answered else None
            key = one_key(line)
            if key and key in "ynadq":
                break
            show(HELP)  # `yn`, a typo or a word: asked again, never taken as its first letter
        answered = True
        if key == "y":
            accepted.append(hunk["id"])
        elif key == "a":
            accepted += [h["id"] for h in hunks[at:]]
            break
        elif key in "dq":
            break
        at += 1
    return _answer(accepted)


def one_key(line: str) -> str:
    """The answer a line gives: one key (`y`), or `yes`/`no` spelled out; "" for anything
    else (`yn` was taken as yes: issue 40)."""
    word = line.strip().lower()
    return {"yes": "y", "no": "n"}.get(word, word if len(word) == 1 else "")


def _answer(accepted: list[int]) -> str:
    return f"accept {' '.join(map(str, accepted))}" if accepted else "reject"
