"""Listing: the sessions a face has open joined with the stored ones, in one order.

First the open sessions, in the order they were opened; then the stored sessions,
most recently updated first. A session that is open and already stored (from its
first kept message on) is in both parts: its stored entry knows it is open, and
carries the provider and model it uses now. Each face shapes the entries for its
protocol (the daemon's `session/list` lists both; ACP's lists each session once).
"""

from __future__ import annotations

from collections.abc import Iterable
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


def listing(store: Store, opened: Iterable[Session], cwd: Path | None = None) -> list[Entry]:
    """Open then stored sessions; only those whose working directory is `cwd` (resolved)."""
    sessions = list(opened)
    here = [s for s in sessions if cwd is None or s.cwd == cwd]
    entries = [Entry(s.id, str(s.cwd), s.provider_name, s.model, s, None) for s in here]
    by_id = {s.id: s for s in sessions}
    for stored in store.list(cwd):
        live = by_id.get(stored.id)
        provider, model = (
            (live.provider_name, live.model) if live else (stored.provider, stored.model)
        )
        entries.append(Entry(stored.id, stored.cwd, provider, model, live, stored))
    return entries
