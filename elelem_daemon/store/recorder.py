"""Recorder: keeps a session on disk by listening to its conversation.

Every kept message is written to the session's file in the Store as it is added (the
prompt when a turn starts, the reply when it ends, `<partial>[cancelled]` when it is
cancelled), so a crash loses at most the turn in flight. A restored session whose
last kept message is a prompt with no reply (the process died mid-turn) gets the
reply `[interrupted]`, so the history still alternates and the model knows.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..conversation import Message
from ..errors import ElelemError
from . import records
from .records import Stored
from .store import Store, Writer

if TYPE_CHECKING:
    from ..session import Session

log = logging.getLogger(__name__)
INTERRUPTED = "[interrupted]"


class Recorder:
    def __init__(self, session: Session, writer: Writer, stored: Stored | None = None) -> None:
        self.session = session
        self.writer = writer
        self.started = stored is not None
        self.meta = (stored.provider, stored.model) if stored else None
        self.broken = False

    def on(self, event: str, message: Message | None) -> None:
        """A Conversation listener: write the change (never raises into the turn)."""
        if self.broken or (not self.started and event != "add"):
            return
        try:
            if not self.started:
                self.meta = (self.session.provider_name, self.session.model)
                self.writer.append(records.header(self.session, message or {}))
                self.started = True
            self._meta()
            if event == "add" and message is not None:
                self.writer.append(records.message(message))
            elif event == "clear":
                self.writer.append(records.cleared())
        except (OSError, ElelemError) as exc:
            self.broken = True
            log.warning("store: %s", exc)
            self.session.output.say(f"this session is no longer saved: {exc}", "error")

    def _meta(self) -> None:
        current = (self.session.provider_name, self.session.model)
        if current != self.meta:
            self.meta = current
            self.writer.append(records.meta(*current))

    def close(self) -> None:
        """Stop recording (a late message must not recreate a deleted file); unlock."""
        self.broken = True
        self.writer.close()


def record(session: Session, store: Store | None, stored: Stored | None = None) -> Recorder | None:
    """Attach a Recorder to the session; with `stored`, continue that session first.

    Without a store, a stored session's messages are restored and nothing is written.
    """
    recorder = None
    if store is not None and stored is None:
        recorder = Recorder(session, store.writer(session.id))
    elif store is not None and stored is not None:
        writer = store.writer(stored.id).open()  # locked: now read what is really there
        try:
            stored = store.load(stored.id)
        except Exception:
            writer.close()
            raise
        recorder = Recorder(session, writer, stored)
    if stored is not None:
        session.id = stored.id
        for message in stored.messages:
            session.conversation.add(message["role"], message["content"])
    if recorder is not None:
        session.conversation.listeners.append(recorder.on)
        session.recorder = recorder
    last = session.conversation.last
    if last is not None and last["role"] == "user":
        session.conversation.add("assistant", INTERRUPTED)
    return recorder
