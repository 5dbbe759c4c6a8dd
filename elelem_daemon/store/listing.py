"""Listing: the sessions a face has open joined with the stored ones, in one order.

First the open sessions, in the order they were opened; then the stored sessions,
most recently updated first. A session that is open and already stored (from its
first kept message on) is in both parts: its stored entry knows it is open, and
carries the provider and model it uses now. Each face shapes the entries for its
protocol (the daemon's `session/list` lists both; ACP's lists each session once).
The stored files are read in a worker thread: a store of thousands of sessions never
holds the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .records import Stored
from .store import Store

if TYPE_CHECKING:
    from ..session import Session


@dataclass(frozen=True)
class Entry:
    """One row: an open session (`stored` is None), or a stored one (`open` is the
    session when it is also open in this face)."""

    session_id: str
    cwd: str
    provider: str
    model: str | None
    open: Session | None
    stored: Stored | None


async def listing(
    store: Store, opened: Callable[[], Iterable[Session]], cwd: Path | None = None
) -> list[Entry]:
    """Open then stored sessions; only those whose working directory is `cwd` (resolved).

    `opened` is asked after the store is read, so the open sessions are those of the
    moment the answer is made."""
    found = await asyncio.to_thread(store.list, cwd)
    sessions = list(opened())
    here = [s for s in sessions if cwd is None or s.cwd == cwd]
    entries = [Entry(s.id, str(s.cwd), s.provider_name, s.model, s, None) for s in here]
    by_id = {s.id: s for s in sessions}
    for stored in found:
        live = by_id.get(stored.id)
        provider, model = (
            (live.provider_name, live.model) if live else (stored.provider, stored.model)
        )
        entries.append(Entry(stored.id, stored.cwd, provider, model, live, stored))
    return entries
