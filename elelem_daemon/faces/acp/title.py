"""The session's title, as ACP's `session_info_update` carries it.

The title is the first line of the conversation's first user message as the model now
holds it (the store's rule for a stored title: records.title_of), so it follows the
history: the first prompt gives it, a `/compact` makes it the summary's first line, a
rewind to before the first turn clears it (`title: null`), a rewind that keeps the
first turn keeps it. The face sends it after a prompt when it changed (live.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...context.compaction import SUMMARY_PREFIX
from ...conversation import text_of
from ...store.records import now, title_of

if TYPE_CHECKING:
    from ...session import Session


def title(session: Session) -> str | None:
    for message in session.conversation:
        if message.get("role") != "user":
            continue
        text = text_of(message.get("content"))
        if text.startswith(SUMMARY_PREFIX):  # a summary's Markdown heading is no title
            text = "\n".join(
                line.lstrip("#").strip() for line in text[len(SUMMARY_PREFIX) :].splitlines()
            )
        if named := title_of(text):
            return named
    return None


def update(named: str | None) -> dict[str, Any]:
    """ACP's `session_info_update`: the title (None clears it) and the time it changed."""
    return {"sessionUpdate": "session_info_update", "title": named, "updatedAt": now()}
