"""The daemon's stored sessions: `session/list`, `session/load` and `session/delete`
(protocol.md, "Stored sessions"). The Store keeps the files; this joins them with the
sessions open in the daemon.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InvalidParams, UnknownSession


def listing(daemon: Any, cwd: str | None = None) -> list[dict[str, Any]]:
    """The open sessions (as created), then every stored one, most recently updated first.

    A session both open and stored is listed twice: as open, and as stored with
    `open: true` (carrying its current provider and model).
    """
    try:
        where = Path(cwd).expanduser().resolve() if cwd is not None else None
    except (OSError, RuntimeError, ValueError) as exc:  # a NUL byte, ~nobody, ...
        raise InvalidParams(f"cwd is unusable: {exc}", errors=[f"cwd: unusable: {exc}"]) from None
    entries = [
        live.describe()
        for live in daemon.sessions.values()
        if where is None or live.session.cwd == where
    ]
    for stored in daemon.store.list(where):
        entry = {**stored.summary(), "open": stored.id in daemon.sessions}
        if entry["open"]:
            session = daemon.sessions[stored.id].session
            entry.update(provider=session.provider_name, model=session.model)
        entries.append(entry)
    return entries


def load(daemon: Any, params: dict[str, Any]) -> dict[str, Any]:
    """Open a stored session (or describe the open one) with its kept messages."""
    from ...session import resume

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
