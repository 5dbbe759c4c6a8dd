"""Recorder: keeps a session on disk by listening to its conversation and its tool calls.

Every kept message is written to the session's file in the Store as it is added (the
prompt when a turn starts, the reply when it ends, `<partial>[cancelled]` when it is
cancelled), so a crash loses at most the turn in flight; so is where each turn begins
(its number, before its prompt, written with the prompt in one write; the sync to the
disk follows off the event loop, after the request is handed over: store.py)
each rewind of the conversation, and each edit of a kept message (`/context edit`,
`/context delete`). Each tool call is written once it has run, as a
record for redrawing only (records.tool: bounded, secrets out). A session is stored
from its first kept message, or at once when the face asks (`start`: the ACP face,
whose clients keep a session's id to load it later).

A restored session whose last kept message is a prompt with no reply (the process
died mid-turn) gets the reply `[interrupted]`, so the history still alternates and the
model knows. A user message kept outside a turn (`/compact`'s summary) is no prompt:
it awaits no reply, and gets none.

`history(session)` is what the faces redraw: the kept messages and the tool calls
between them, in order, as the Recorder holds them (the stored ones, then this
process's), following the conversation's clears and rewinds (store.history).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..base.errors import ElelemError
from ..conversation import Message
from ..result import Result
from . import pages, records
from .history import History
from .records import Record, Stored
from .store import Store, Writer

if TYPE_CHECKING:
    from ..session import Session

log = logging.getLogger(__name__)
INTERRUPTED = "[interrupted]"


class Recorder:
    def __init__(
        self, session: Session, writer: Writer | None, stored: Stored | None = None
    ) -> None:
        self.session = session
        self.writer = writer  # None: the history is kept in memory only (not saving)
        self.started = stored is not None
        self.meta = (stored.provider, stored.model) if stored else None
        self.broken = writer is None
        self.pending: Record | None = None  # a turn's start, written with what follows it
        self.pending_mode: Record | None = None  # a mode set before the file was started
        self.history = stored.history.copy() if stored else History()

    def start(self) -> None:
        """Store the session now, before its first message (a header line alone)."""
        if not self.started:
            self._write([])

    def on(self, event: str, message: Message | None) -> None:
        """A Conversation listener: keep the change, and write it (never raises into the
        turn). A turn's start is written with its prompt, in one write."""
        if event == "add" and message is not None:
            prompt = message["role"] != "user" or self.session.agent.in_turn
            record = records.message(message, prompt)
            self.history.add(record)
            self._write([record], message)
        elif event == "turn" and message is not None:
            self.history.begin(message["turn"])
            if not self.broken:
                self.pending = records.turn(message["turn"], message["at"])
        elif event == "clear":
            compacted = bool(message and message.get("compacted"))
            if compacted:
                self.history.compact()
            else:
                self.history.clear()
            if self.started:
                self._write([records.cleared(compacted)])
        elif event == "edit" and message is not None:
            self.history.edit(message["index"], message["content"])
            if self.started:
                self._write([records.edited(message["index"], message["content"])])
        elif event == "rewind" and message is not None:
            self.history.rewind(message["turn"])
            if self.started:
                self._write([records.rewound(message["turn"])])

    def on_call(self, call: dict[str, Any], result: Result) -> None:
        """A tool call has run: keep it for redrawing, and write it."""
        record = records.tool(call, not result.failed, result.payload)  # as faces show it
        self.history.add(record)
        if self.started:
            self._write([record])

    def on_mode(self, mode: Any) -> None:
        """The session's mode changed (modes.Modes listener): write it, so a resumed
        session comes back in it (a session not stored yet stores it with its first
        message)."""
        record = records.mode(mode.id)
        if self.started:
            self._write([record])
        else:
            self.pending_mode = record

    def _write(self, after: list[Record], first: Message | None = None) -> None:
        """Write `after` in one append: the header first if the file is new, a changed
        provider or model, and the turn's start that waits for its prompt."""
        if self.broken or self.writer is None:
            return
        try:
            lines: list[Record] = []
            if not self.started:
                self.meta = (self.session.provider_name, self.session.model)
                lines.append(records.header(self.session, first or {}))
                self.started = True
            lines += self._meta()
            if self.pending_mode is not None:
                lines.append(self.pending_mode)
                self.pending_mode = None
            if self.pending is not None:
                lines.append(self.pending)
                self.pending = None
            self.writer.append(*lines, *after)
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
        if self.writer is not None:
            self.writer.close()


def record(
    session: Session, store: Store | None, stored: Stored | None = None, now: bool = False
) -> Recorder:
    """Attach a Recorder to the session; with `stored`, continue that session first;
    with `now`, store a new session at once.

    Without a store nothing is written: a stored session's messages are restored, and
    its history is kept in memory for redrawing.
    """
    writer = None
    if store is not None and stored is None:
        writer = store.writer(session.id)
    elif store is not None and stored is not None:
        writer = store.writer(stored.id).open()  # locked: now read what is really there
        try:
            if stored.read_as is None or stored.read_as != writer.fingerprint():
                stored = store.load(stored.id)  # it changed since it was read: read it again
        except Exception:
            writer.close()
            raise
    recorder = Recorder(session, writer, stored)
    if stored is not None:
        session.id = stored.id
        session.conversation.adopt(stored.conversation)  # its messages, and its turns
        session.turns = max(session.turns, session.conversation.last_turn)  # numbers go on
    session.conversation.listeners.append(recorder.on)
    session.agent.call_listeners.append(recorder.on_call)
    session.modes.listeners.append(recorder.on_mode)
    session.recorder = recorder
    if stored is not None and stored.interrupted:
        session.conversation.add("assistant", INTERRUPTED)
    if now:
        recorder.start()
    return recorder


def entries(session: Session) -> tuple[list[Record], int]:
    """The history's entries as kept (times included) and its generation (pages.py)."""
    if session.recorder is not None:
        kept = session.recorder.history
        return kept.entries, kept.generation
    return [records.message(m) for m in session.conversation], 0


def history(session: Session) -> list[Record]:
    """What a face redraws of a session: `{type: "message", role, content}` and
    `{type: "tool", id, name, arguments, ok, result}` in order (pages.shown: times left
    out, a compaction's summary marked `prompt: false`)."""
    if session.recorder is not None:
        kept = session.recorder.history.entries
    else:
        kept = [records.message(m) for m in session.conversation]
    return [pages.shown(entry) for entry in kept]
