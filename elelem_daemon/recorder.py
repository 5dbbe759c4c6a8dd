"""Recorder: keeps a session on disk by listening to its conversation.

Every kept message is written to the session's file in the Store as it is added (the
prompt when a turn starts, the reply when it ends, `<partial>[cancelled]` when it is
cancelled), so a crash loses at most the turn in flight. A restored session whose
last kept message is a prompt with no reply (the process died mid-turn) gets the
reply `[interrupted]`, so the history still alternates and the model knows.
"""

from __future__ import annotations

import logging
from typing import Any

from .conversation import text_of
from .errors import ElelemError
from .store import VERSION, Store, Stored, Writer, now, title_of

log = logging.getLogger(__name__)
INTERRUPTED = "[interrupted]"


class Recorder:
    def __init__(self, session: Any, writer: Writer, stored: Stored | None = None) -> None:
        self.session = session
        self.writer = writer
        self.started = stored is not None
        self.meta = (stored.provider, stored.model) if stored else None
        self.broken = False

    def on(self, event: str, message: dict[str, Any] | None) -> None:
        """A Conversation listener: write the change (never raises into the turn)."""
        if self.broken or (not self.started and event != "add"):
            return
        try:
            if not self.started:
                self.writer.append(self._header(message or {}))
                self.started = True
            self._meta()
            if event == "add" and message is not None:
                self.writer.append(
                    {
                        "type": "message",
                        "role": message["role"],
                        "content": message["content"],
                        "at": now(),
                    }
                )
            elif event == "clear":
                self.writer.append({"type": "clear", "at": now()})
        except (OSError, ElelemError) as exc:
            self.broken = True
            log.warning("store: %s", exc)
            self.session.output.say(f"this session is no longer saved: {exc}", "error")

    def _header(self, first: dict[str, Any]) -> dict[str, Any]:
        session = self.session
        self.meta = (session.provider_name, session.model)
        title = title_of(text_of(first.get("content"))) if first.get("role") == "user" else ""
        return {
            "type": "session",
            "version": VERSION,
            "id": session.id,
            "cwd": str(session.cwd),
            "provider": session.provider_name,
            "model": session.model,
            "created": now(),
            "title": title,
        }

    def _meta(self) -> None:
        current = (self.session.provider_name, self.session.model)
        if current != self.meta:
            self.meta = current
            self.writer.append(
                {"type": "meta", "provider": current[0], "model": current[1], "at": now()}
            )

    def close(self) -> None:
        """Stop recording (a late message must not recreate a deleted file); unlock."""
        self.broken = True
        self.writer.close()


def record(session: Any, store: Store | None, stored: Stored | None = None) -> Recorder | None:
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
