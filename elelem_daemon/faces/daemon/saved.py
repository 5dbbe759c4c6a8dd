"""The daemon's stored sessions: `session/list`, `session/load` and `session/delete`
and `session/history` (protocol.md, "Stored sessions"). The Store keeps the files and
`store.listing` joins them with the sessions open here; this shapes the answers. A
stored session is read off the event loop (`load`), and its history goes out a page
at a time (store/pages.py): `session/load` answers with the newest page, and
`session/history` gives the older ones.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...base.errors import InvalidParams, ShuttingDown, UnknownSession

if TYPE_CHECKING:
    from ...session import Session
    from ...store.records import Stored
    from .daemon import Daemon


async def listing(daemon: Daemon, cwd: str | None = None) -> list[dict[str, Any]]:
    """The open sessions (as created), then every stored one, most recently updated first.

    A session both open and stored is listed twice: as open, and as stored with
    `open: true` (carrying its current provider and model, and `servedModel`).
    """
    from ...store.listing import listing as joined
    from .live import served

    try:
        where = Path(cwd).expanduser().resolve() if cwd is not None else None
    except (OSError, RuntimeError, ValueError) as exc:  # a NUL byte, ~nobody, ...
        raise InvalidParams(f"cwd is unusable: {exc}", errors=[f"cwd: unusable: {exc}"]) from None
    entries = []
    for entry in await joined(daemon.store, daemon.lives.sessions, where):
        if entry.stored is None:
            entries.append(daemon.lives.get(entry.session_id).describe())
        else:
            entries.append(
                {
                    **entry.stored.summary(),
                    "provider": entry.provider,
                    "model": entry.model,
                    "open": entry.open is not None,
                    **(served(entry.open) if entry.open is not None else {}),
                }
            )
    return entries


async def load(daemon: Daemon, params: dict[str, Any]) -> dict[str, Any]:
    """Open a stored session (or describe the open one) with its kept messages.

    The file is read and parsed in a thread (a 60 MB session takes a while, and the
    other sessions' requests go on meanwhile); opening the session is on the loop. A
    session opened here while the file was read (a second `session/load` of it) is
    described as open."""
    from ...session import resume

    session_id = params["sessionId"]
    stored: Stored | None = None
    if daemon.lives.find(session_id) is None:
        stored = await asyncio.to_thread(daemon.store.load, session_id)
        if daemon.shut_down:  # `shutdown` closed every session meanwhile: open none
            raise ShuttingDown("the daemon is shutting down: session/load refused")
    live = daemon.lives.find(session_id)
    if live is not None:
        recorder = live.session.recorder
        title = ""
        if recorder and recorder.started:
            if stored is None:
                stored = await asyncio.to_thread(daemon.store.load, session_id)
            title = stored.title
        described = daemon.add_servers(live, params.get("mcpServers"), "session/load")
        return {**described, "title": title, **first_page(live.session)}
    assert stored is not None
    loaded = stored
    described = daemon.open(
        lambda **io: resume(
            daemon.registry,
            daemon.store,
            loaded,
            params.get("provider"),
            params.get("model"),
            project=params.get("trusted"),  # absent: the trusted-folders file decides
            **io,
        ),
        params.get("mcpServers"),
        "session/load",
    )
    session = daemon.lives.get(described["sessionId"]).session
    return {**described, "title": stored.title, **first_page(session)}


def first_page(session: Session) -> dict[str, Any]:
    """What `session/load` carries of the conversation: `history`, its newest page (all
    of it for most sessions), `historyCursor` for the page before it (null: no more),
    `messages`, the newest kept messages within the same bound (`messagesComplete`
    false when older ones were left out: `session/context` has them all), and `plan`."""
    from ...store import pages
    from ...store.recorder import entries
    from ...turns.plans import last_plan

    kept, generation = entries(session)
    shown, cursor = pages.page(kept, generation)
    conversation = list(session.conversation)
    start, total = len(conversation), 0
    while start > 0:
        cost = pages.weight(conversation[start - 1])
        if start < len(conversation) and total + cost > pages.PAGE_WEIGHT:
            break
        total, start = total + cost, start - 1
    return {
        "messages": [{"role": m["role"], "content": m["content"]} for m in conversation[start:]],
        "messagesComplete": start == 0,
        "history": shown,
        "historyCursor": cursor,
        "plan": last_plan(kept),
    }


def older(daemon: Daemon, params: dict[str, Any]) -> dict[str, Any]:
    """`session/history`: the page before `cursor` of an open session's history, and
    the cursor of the page before that (null: it was the oldest)."""
    from ...store import pages
    from ...store.recorder import entries

    session = daemon.lives.get(params["sessionId"]).session
    kept, generation = entries(session)
    shown, cursor = pages.page(kept, generation, params["cursor"])
    return {"history": shown, "cursor": cursor}


def messages(session: Session) -> dict[str, Any]:
    """`messages` (what the model sees again), `history` (the same messages with the
    session's tool calls between them, for redrawing: store.recorder.history) and `plan`
    (the last `todo` list in that history, or None: plans.last_plan)."""
    from ...store.recorder import history
    from ...turns.plans import last_plan

    shown = history(session)
    return {
        "messages": [{"role": m["role"], "content": m["content"]} for m in session.conversation],
        "history": shown,
        "plan": last_plan(shown),
    }


async def delete(daemon: Daemon, session_id: str, cwd: Path | None) -> dict[str, Any]:
    """Delete the stored session and what plugins kept of it (its checkpoints); `cwd`
    is the folder of the session if it was open here."""
    from ...session import delete as delete_stored
    from ...session import forget

    try:
        await delete_stored(daemon.registry, daemon.store, session_id, cwd)
    except UnknownSession:
        if cwd is None:
            raise
        await forget(daemon.registry, session_id, cwd)  # open, never saved: closing it was it
    return {}
