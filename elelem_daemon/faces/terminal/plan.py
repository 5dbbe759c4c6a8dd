"""The terminal's share of modes and plans: the mode on goes on the status line (when
it is not `build`: `stub · stub · 2 messages · plan`), each `todo` list is printed as a
compact list (`[x]` done, `[~]` in progress, `[ ]` to do), and a resumed session
redraws its last plan and says its mode (resume.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...turns.modes import DEFAULT
from ...turns.plans import compact, last_plan

if TYPE_CHECKING:
    from ...session import Session


def shown_mode(session: Session) -> str | None:
    """The mode for the status line: None for the default one."""
    mode = session.modes.current.id
    return None if mode == DEFAULT else mode


def attach(session: Session) -> None:
    """Print every new plan as it comes."""
    session.plan.listeners.append(lambda entries: session.output.say(compact(entries), "info"))


def redraw(session: Session) -> None:
    """After a resumed session's history: its last plan, and its mode if not build."""
    from ...store.recorder import history

    plan = last_plan(history(session))
    if plan is not None:
        session.output.say(compact(plan["entries"]), "info")
    if (mode := shown_mode(session)) is not None:
        session.output.say(f"  → mode: {mode}", "info")
