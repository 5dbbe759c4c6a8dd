"""Recorder: keeps a session on disk by listening to its conversation.

Every kept message is written to the session's file in the Store as it is added (the
prompt when a turn starts, the reply when it ends, `<partial>[cancelled]` when it is
cancelled), so a crash loses at most the turn in flight; so is where each turn begins
(its number, before its prompt) and each rewind of the conversation. A restored
session whose last kept message is a prompt with no reply (the process died mid-turn)
gets the reply `[interrupted]`, so the history still alternates and the model knows.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..conversation import Message
from ..errors import ElelemError
from . import records
from .records import Record, Stored
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
        self.pending: Record | None = None  # a turn's start, written with what follows it

    def on(self, event: str, message: Message | None) -> None:
        """A Conversation listener: write the change (never raises into the turn). A
        turn's start is written with its prompt, in one write and one fsync."""
        if self.broken:
            return
        if event == "turn" and message is not None:
            self.pending = records.turn(message["turn"], message["at"])
            return
        if not self.started and event != "add":
            return
        try:
            lines = []
            if not self.started:
                self.meta = (self.session.provider_name, self.session.model)
                lines.append(records.header(self.session, message or {}))
                self.started = True
            lines += self._meta()
            if self.pending is not None:
                lines.append(self.pending)
                self.pending = None
            if event == "add" and message is not None:
                lines.append(records.message(message))
            elif event == "clear":
                lines.append(records.cleared())
            elif event == "rewind" and message is not None:
                lines.append(records.rewound(message["turn"]))
            self.writer.append(*lines)
        except (OSError, ElelemError) as exc:
            self.broken = True
            log.warning("store: %s", exc)
            self.session.output.say(f"this session is no longer saved: {exc}", "error")

    def _meta(self) -> list[Record]:
        current = (self.session.provider_name, self.session.model)
        if current == self.meta:
            return []
        self.meta = current
        return [records.meta(*current)]

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
        session.conversation.adopt(stored.conversation)  # its messages, and its turns
        session.turns = max(session.turns, session.conversation.last_turn)  # numbers go on
    if recorder is not None:
        session.conversation.listeners.append(recorder.on)
        session.recorder = recorder
    last = session.conversation.last
    if last is not None and last["role"] == "user":
        session.conversation.add("assistant", INTERRUPTED)
    return recorder
