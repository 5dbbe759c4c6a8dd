"""The daemon's stored sessions: `session/list`, `session/load` and `session/delete`
(protocol.md, "Stored sessions"). The Store keeps the files; this joins them with the
sessions open in the daemon.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import UnknownSession
from .store import Stored


def listing(daemon: Any, cwd: str | None = None) -> list[dict[str, Any]]:
    """Open sessions first (newest first), then stored ones, most recently updated first."""
    where = Path(cwd).expanduser().resolve() if cwd is not None else None
    stored = {s.id: s for s in daemon.store.list(where)}
    entries = []
    for session_id, live in reversed(daemon.sessions.items()):
        if where is not None and live.session.cwd != where:
            continue
        entry = {**live.describe(), "open": True, "stored": session_id in stored}
        if session_id in stored:
            entry.update(_dates(stored[session_id]))
        entries.append(entry)
    for session_id, saved in stored.items():
        if session_id not in daemon.sessions:
            entries.append({**saved.summary(), "open": False})
    return entries


def _dates(stored: Stored) -> dict[str, Any]:
    return {"title": stored.title, "created": stored.created, "updatedAt": stored.updated}


def load(daemon: Any, params: dict[str, Any]) -> dict[str, Any]:
    """Open a stored session (or describe the open one) with its kept messages."""
    from .session import resume

    session_id = params["sessionId"]
    live = daemon.sessions.get(session_id)
    if live is not None:
        recorder = live.session.recorder
        title = daemon.store.load(session_id).title if recorder and recorder.started else ""
        return {**live.introduce(), "title": title, **messages(live.session)}
    stored = daemon.store.load(session_id)
    described = daemon.open(
        lambda **io: resume(
            daemon.registry,
            daemon.store,
            stored,
            params.get("provider"),
            params.get("model"),
            project=params.get("trusted", True),
            **io,
        )
    )
    session = daemon.sessions[described["sessionId"]].session
    return {**described, "title": stored.title, **messages(session)}


def messages(session: Any) -> dict[str, Any]:
    return {
        "messages": [{"role": m["role"], "content": m["content"]} for m in session.conversation]
    }


def delete(daemon: Any, session_id: str, was_open: bool) -> dict[str, Any]:
    try:
        daemon.store.delete(session_id)
    except UnknownSession:
        if not was_open:  # open but never saved (no message yet): closing it was the delete
            raise
    return {}
