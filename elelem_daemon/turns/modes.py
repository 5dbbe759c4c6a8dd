"""Modes: what the agent is asked to do in a session, each a prompt and a tool filter.

A `Mode` has an id (`build`, `plan`, ...), a name and a description for pickers, a
`prompt` (text the system prompt gains while the mode is on) and `tools`, the filter:
None lets every tool through; otherwise a tuple of patterns, each a tool's name, a
glob over names (`mcp_*`) or `kind:KIND` (tool.KINDS: `kind:read`, `kind:search`).
A mode may also `prepare` text for its prompt, asynchronously, before each turn (the
review mode's diff): what it returned follows the prompt.

A session's `Modes` holds the modes its plugins registered (`plugin.mode`, the built-in
ones included: builtins/modes.py), which one is on, and who hears a change
(`listeners`, each called with the new Mode: the faces' events, the store's record).
The agent reads the filter at every provider request (`Agent.tool_filter`): a change
made while a turn runs takes effect at the next request. The refusal of a call the
mode does not allow is a before hook of the built-in modes plugin, so the model reads
why. Without any registered mode (a bare Agent), `build` lets everything through.
"""

from __future__ import annotations

import fnmatch
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..base.errors import UnknownMode

log = logging.getLogger(__name__)
DEFAULT = "build"
ID = re.compile(r"[a-z][a-z0-9_-]{0,31}")  # a mode's id (and a mode file's name)
Listener = Callable[["Mode"], None]
# `prepare` gets the session (a ports.SessionView), typed `Any` here: the core that
# defines SessionView sits above turns/, and a lower layer names no higher one.
Prepare = Callable[[Any], Awaitable[str]]


def valid_id(mode_id: Any) -> bool:
    return isinstance(mode_id, str) and ID.fullmatch(mode_id) is not None


@dataclass(frozen=True)
class Mode:
    id: str
    name: str = ""
    description: str = ""
    prompt: str = ""
    tools: tuple[str, ...] | None = None  # None: every tool
    source: str = "builtin"  # builtin, plugin, user or project (a mode file)
    prepare: Prepare | None = field(default=None, compare=False, repr=False)

    def allows(self, tool: Any) -> bool:
        """Whether a tool (anything with `name` and `kind`) may run in this mode."""
        if self.tools is None:
            return True
        name, kind = getattr(tool, "name", ""), getattr(tool, "kind", "other")
        for pattern in self.tools:
            if pattern.startswith("kind:"):
                if kind == pattern[5:]:
                    return True
            elif fnmatch.fnmatchcase(name, pattern):
                return True
        return False

    def shown(self) -> dict[str, str]:
        """`{id, name, description}`, as every face lists a mode."""
        return {
            "id": self.id,
            "name": self.name or self.id.title(),
            "description": self.description,
        }


BUILD = Mode(DEFAULT, "Build", "Make the changes asked for, with every tool")


class Modes:
    """A session's modes, the one on, and who hears a change."""

    def __init__(self) -> None:
        self._modes: dict[str, Mode] = {}
        self.current_id = DEFAULT
        self.listeners: list[Listener] = []
        self.problems: list[str] = []  # mode files that could not load (builtins/modes.py)
        self.prepared = ""  # what the current mode's `prepare` gave, for its prompt

    def add(self, mode: Mode) -> None:
        """Register a mode; a later one with the same id replaces the earlier."""
        self._modes[mode.id] = mode

    def clear(self) -> None:
        """Forget the registered modes (a /reload registers them again); the mode on
        stays on if it comes back (`settle`)."""
        self._modes.clear()
        self.problems.clear()

    def ids(self) -> list[str]:
        return [mode.id for mode in self.available()]

    def available(self) -> list[Mode]:
        """The registered modes, `build` first (the bare one when none is registered)."""
        modes = dict(self._modes)
        first = modes.pop(DEFAULT, BUILD)
        return [first, *modes.values()]

    def get(self, mode_id: str) -> Mode | None:
        return next((m for m in self.available() if m.id == mode_id), None)

    @property
    def current(self) -> Mode:
        return self.get(self.current_id) or self.available()[0]

    def set(self, mode_id: str) -> Mode:
        """Turn a mode on (UnknownMode if there is none by that id); the listeners hear
        it when it changed."""
        mode = self.get(mode_id) if isinstance(mode_id, str) else None
        if mode is None:
            ids = self.ids()
            shown = str(mode_id)[:64]
            raise UnknownMode(f'unknown mode: "{shown}". Modes: {", ".join(ids)}', modes=ids)
        if mode.id != self.current_id:
            self.current_id, self.prepared = mode.id, ""
            self._tell(mode)
        return mode

    def restore(self, mode_id: str | None) -> None:
        """The mode a stored session had, without telling anyone (it is not a change);
        one that no longer exists leaves `build` on, with a problem said."""
        if not mode_id or mode_id == self.current_id:
            return
        if self.get(mode_id) is None:
            self.problems.append(f"the stored mode {mode_id!r} no longer exists: {DEFAULT} is on")
            log.warning("modes: %s", self.problems[-1])
            return
        self.current_id = mode_id

    def settle(self) -> None:
        """After a /reload: if the mode on is gone, `build` is, and listeners hear it."""
        if self.get(self.current_id) is None:
            self.current_id, self.prepared = DEFAULT, ""
            self._tell(self.current)

    def _tell(self, mode: Mode) -> None:
        for listener in list(self.listeners):
            try:
                listener(mode)
            except Exception as exc:  # a face that fails to hear costs a log line
                log.warning("modes: a listener failed: %s", exc, exc_info=True)

    def allows(self, tool: Any) -> bool:
        return self.current.allows(tool)

    def section(self) -> str:
        """The system prompt's text for the mode on (a SystemPrompt section)."""
        mode = self.current
        parts = [mode.prompt.strip(), self.prepared.strip()]
        return "\n\n".join(part for part in parts if part)

    async def prepare(self, session: Any) -> None:
        """Run the mode's `prepare` (before a turn); a failure leaves the text empty."""
        mode = self.current
        if mode.prepare is None:
            self.prepared = ""
            return
        try:
            self.prepared = str(await mode.prepare(session) or "")
        except Exception as exc:
            log.warning("modes: %s could not prepare: %s", mode.id, exc)
            self.prepared = ""

    def to_dict(self) -> dict[str, Any]:
        """`{current, available: [{id, name, description}]}` (protocol.md, "Modes"), and
        `problems` when a mode file could not load."""
        answer: dict[str, Any] = {
            "current": self.current.id,
            "available": [mode.shown() for mode in self.available()],
        }
        if self.problems:
            answer["problems"] = list(self.problems)
        return answer
