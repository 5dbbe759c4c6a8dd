"""The built-in `/steer` command. A steer goes to a running turn (steering.py): in the
terminal a line typed during a turn (or `/steer TEXT`) is one (faces/terminal/
typeahead.py), in the daemon `session/steer`, over ACP a prompt sent while a turn runs.
A command never runs during a turn, so `/steer` at the prompt only says how."""

from __future__ import annotations

from ..ports import SessionView
from ..registry import Plugin

IDLE = (
    "  no turn is running: send the text as a prompt. While a turn runs, a line you type"
    " (or /steer TEXT) goes to it with its next request."
)


def register(plugin: Plugin) -> None:
    @plugin.command("steer", "Send a message to the running turn")
    def steer(session: SessionView, args: str | None) -> None:
        session.output.say(IDLE)
