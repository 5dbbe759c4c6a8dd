"""The built-in `/shell` command (elelem 0.10): an interactive shell whose transcript the
model reads.

In the terminal (the Input has `shell`: faces/terminal/shell_session.py) `$SHELL` runs
recorded by `script`; when it exits, its transcript, cleaned (`cleaned`: escape
sequences and other control characters out, carriage returns and backspaces applied,
`script`'s own header lines dropped) and capped to its last MAX_TRANSCRIPT characters,
is kept as a user message (no model call; like `/compact`'s summary it is no prompt).
An empty transcript keeps nothing. The editor faces have no terminal to lend: there
`/shell` says so (their clients run a shell in the editor's own terminal).
"""

from __future__ import annotations

import re

from ..ports import SessionView
from ..registry import Plugin

MAX_TRANSCRIPT = 32_000  # characters of the transcript kept (its end)
ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]"  # other escapes
    r"|[\x80-\x9f]"  # C1 controls
)
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
HEADER = re.compile(r"^Script (started|done) on .*$", re.MULTILINE)
NO_TERMINAL = (
    "  /shell runs in the terminal only (elelem chat): here, use your editor's own terminal"
)


def cleaned(raw: str) -> str:
    """The transcript as plain text: escape sequences out, `\\r\\n` a newline, a lone
    `\\r` or a backspace overwriting what came before on its line, other controls out."""
    text = ESCAPES.sub("", raw).replace("\r\n", "\n")
    lines = []
    for line in text.split("\n"):
        line = line.rsplit("\r", 1)[-1] if "\r" in line.rstrip("\r") else line.rstrip("\r")
        shown: list[str] = []
        for char in line:
            if char == "\b":
                if shown:
                    shown.pop()
            elif not CONTROLS.match(char) or char == "\t":
                shown.append(char)
        lines.append("".join(shown).rstrip())
    text = HEADER.sub("", "\n".join(lines))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def message(raw: str) -> str | None:
    """The user message a transcript becomes; None when nothing shows in it."""
    text = cleaned(raw)
    if not text:
        return None
    if len(text) > MAX_TRANSCRIPT:
        cut = len(text) - MAX_TRANSCRIPT
        text = f"[{cut} characters cut]\n{text[-MAX_TRANSCRIPT:]}"
    fence = "```"
    while fence in text:
        fence += "`"
    return f"The transcript of a shell session I ran:\n\n{fence}\n{text}\n{fence}"


def register(plugin: Plugin) -> None:
    @plugin.setup
    def listed_where_it_runs(session: SessionView) -> None:
        """Not offered where there is no terminal to lend (the editor faces); typed
        anyway, it says where to go."""
        if not callable(getattr(session.input, "shell", None)):
            session.commands.hide("shell")

    @plugin.command("shell", "Start interactive shell")
    async def shell(session: SessionView, args: str | None) -> None:
        run = getattr(session.input, "shell", None)
        if not callable(run):
            session.output.say(NO_TERMINAL)
            return
        raw = await run()
        if raw is None:
            return  # the face said why
        kept = message(raw)
        if kept is None:
            session.output.say("  → the shell printed nothing: nothing added")
            return
        session.conversation.add("user", kept)
        lines = kept.count("\n") - 3
        session.output.say(f"  → shell transcript added ({lines} line{'s' * (lines != 1)})")
