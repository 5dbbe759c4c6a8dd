"""The ACP face's stored sessions: `session/list`, `session/delete` and `session/fork`.

Each is a thin call into the store (store.listing, session.delete: the one home of a
deletion, Store.fork); an id that names no session is UnknownSession (-32002), as in
every method.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...base.errors import UnknownSession
from ...control.live import SHOWN_ID
from ...jsonrpc.errors import invalid_params
from ...store.listing import listing
from .params import field

if TYPE_CHECKING:
    from .server import AcpServer


async def list_sessions(server: AcpServer, params: dict[str, Any]) -> dict[str, Any]:
    """The sessions open here, then the stored ones, most recent first (the one order,
    store.listing); each session once, with what the store knows of it."""
    cwd = field(params, "cwd", str, required=False)
    if cwd is not None and not Path(cwd).is_absolute():
        raise invalid_params(f"cwd: must be an absolute path: {cwd}")
    if field(params, "cursor", str, required=False) is not None:
        raise invalid_params("cursor: unknown cursor (every session comes in one page)")
    where = Path(cwd).resolve() if cwd else None
    entries = await listing(server.store, server.lives.sessions, where)
    stored = {e.session_id: e.stored for e in entries if e.stored is not None}
    listed = []
    for entry in entries:
        if entry.open is not None and entry.stored is not None:
            continue  # listed once, among the open sessions
        found = stored.get(entry.session_id)
        row: dict[str, Any] = {"sessionId": entry.session_id, "cwd": entry.cwd}
        live = server.lives.find(entry.session_id) if entry.open is not None else None
        if live is not None and live.roots:
            row["additionalDirectories"] = list(live.roots)
        if found is not None:
            row["updatedAt"] = found.updated
            if found.title:
                row["title"] = found.title
        meta = {"provider": entry.provider, "model": entry.model, "open": entry.open is not None}
        listed.append({**row, "_meta": {"elelem": meta}})
    return {"sessions": listed}


async def delete_session(server: AcpServer, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a session: one open here is closed first (its turn cancelled), then its
    stored file and what plugins kept of it (its checkpoints) go (session.delete). It
    is gone from `session/list` and from the disk. Another process's open session is
    SessionLocked; an unknown id UnknownSession."""
    from ...session import delete, forget

    ident = field(params, "sessionId", str)
    live = server.lives.pop(ident)
    cwd = live.session.cwd if live is not None else None
    if live is not None:
        await live.close()
    try:
        await delete(server.registry(), server.store, ident, cwd)
    except UnknownSession as exc:
        if cwd is None:  # `data.sessionId`, as ACP's "session not found" has it
            raise UnknownSession(str(exc), sessionId=ident[:SHOWN_ID]) from None
        await forget(server.registry(), ident, cwd)  # open, never stored: closing it was it
    return {}


async def fork_stored(server: AcpServer, ident: str) -> str:
    """A copy of the session under a new id, in the store (Store.fork, in a thread: a
    long history is read and written whole); the session open here must not be
    mid-turn (its prompt would be kept without its reply)."""
    live = server.lives.find(ident)
    if live is not None:
        live.ensure_idle()
    new = uuid.uuid4().hex
    await asyncio.to_thread(server.store.fork, ident, new)
    return new
