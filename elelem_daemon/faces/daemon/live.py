"""DaemonLive: one session open in the daemon face, and what the face keeps beside it:
the Events that number its turns' notifications, the Asker that sends its questions,
the watch on its MCP servers (servers.py) and, once the client sends one, the
editor's state (context/editor_state.py, a note ahead of the turn's prompt). `introduce` and
`describe` are the shapes protocol.md gives a session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...context.compaction import compact_at
from ...control.live import Live
from ...plugins import origins
from . import servers
from .events import Asker, Events

if TYPE_CHECKING:
    from ...context.editor_state import EditorState
    from ...session import Session


class DaemonLive(Live):
    """An open session, the Events that number its turns' notifications, the Asker
    that sends its questions, the watch on its MCP servers and, once the client sends
    one, the editor's state."""

    def __init__(self, session: Session, events: Events, asker: Asker) -> None:
        super().__init__(session)
        self.events = events
        self.asker = asker
        self.servers = servers.Watch(session, events, asker)
        self.editor: EditorState | None = None
        self.counted = 0  # the meter's turns already told (event/usage)
        steered = lambda text: events.notice("event/steer", {"text": text})  # noqa: E731
        session.agent.steering.listeners.append(steered)
        session.modes.listeners.append(self.mode_changed)
        session.plan.listeners.append(self.planned)
        self.ask_held = bool(session.held)  # the user's files held: asked once

    async def confirm_held(self, line: str | None = None) -> None:
        """Before the first turn or command (but `/trust`): the user's own files held
        as new or changed (vetted.py) are an `input/ask` of kind `trust`, options
        `["hold", "load"]` (a client answering with the first choice loads nothing);
        only `load` loads them. A client that takes no questions has `held` in
        `session/new` and `/trust files`."""
        if not self.ask_held or (line or "").startswith("/trust"):
            return
        self.ask_held = False
        if self.asker.enabled and self.session.held:
            await self.hold(self._confirm_held)

    async def _confirm_held(self) -> None:
        from ...safety import vetted

        shown = list(self.session.held)
        answer = await self.asker.ask(
            vetted.question(shown),
            list(vetted.OPTIONS),
            kind="trust",
            files=[item.to_dict() for item in shown],
        )
        if answer != vetted.LOAD:
            return
        vetted.approve(shown)
        self.session.held = vetted.held()
        self.session.reload()

    def mode_changed(self, mode: Any) -> None:
        """`event/mode`, whichever door changed it (`session/setMode`, `/mode`)."""
        self.events.notice("event/mode", {"mode": self.session.modes.to_dict()})

    def planned(self, entries: list[dict[str, str]]) -> None:
        """`event/plan`: the whole list, each time the `todo` tool runs."""
        self.events.notice("event/plan", {"entries": entries})

    def started(self) -> None:
        self.events.turn_id = self.turns

    def ended(self) -> None:
        self.events.flush()  # held deltas belong to this turn, before its response
        meter = self.session.usage
        if meter.turns != self.counted:  # a turn ran (a command's /compact too)
            self.counted = meter.turns
            if meter.reported:  # its provider said what it used (the stub says nothing)
                # compactAt: where auto-compaction starts, so a meter can warn before it
                report = {**meter.report(), "compactAt": compact_at(), **served(self.session)}
                self.events.notice("event/usage", report)
        self.events.turn_id = None
        self.servers.hook()  # a /reload may have given the session its first servers

    def editor_state(self, params: dict[str, Any]) -> None:
        """An `editor/state`: the next turn's prompt carries it as a note (transcript.py;
        never the system prompt, the conversation or the store). A malformed one raises
        AttachmentError and changes nothing."""
        if self.editor is None:
            from ...context.editor_state import EditorState

            state = EditorState(self.session.cwd)
            state.update(params)
            self.editor = state.attach(self.session.agent.transcript.system_prompt)
            return
        self.editor.update(params)

    async def close(self, timeout: float | None = None) -> None:
        self.servers.close()
        await super().close(timeout)

    def introduce(self) -> dict[str, Any]:
        """What `session/new` answers: the description, the tools, the commands, the
        plugins (with where each came from), the folder's trust (what it skipped) and
        the MCP servers' status."""
        s = self.session
        answer = {
            **self.describe(),
            "tools": [{"name": t.name, "description": t.description} for t in s.toolbox],
            "commands": [{"name": n.lstrip("/"), "description": a} for n, a in s.commands],
            "plugins": origins(s.registry),
            "mcp": servers.status(s),
            "mode": s.modes.to_dict(),
        }
        if s.trust is not None:
            answer["trust"] = s.trust.report()
        if s.held:  # the user's own files, new or changed since approved: not loaded
            answer["held"] = [item.to_dict() for item in s.held]
        return answer

    def describe(self) -> dict[str, Any]:
        s = self.session
        return {
            "sessionId": s.id,
            "cwd": str(s.cwd),
            "provider": s.provider_name,
            "model": s.model,
            "busy": self.busy,
            "turns": self.turns,
            **served(s),
        }


def served(session: Session) -> dict[str, str]:
    """`servedModel`: the model the provider's server says answers (the name its answers
    carry, or the one a local server lists), once known; nothing before (protocol.md)."""
    named = getattr(session.provider, "answering", None)
    return {"servedModel": named} if isinstance(named, str) and named else {}
