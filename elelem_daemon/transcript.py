"""Transcript: a stable system prompt, the conversation, and fresh notes.

The system prompt opens with what the agent is where it runs: `FACES` has one line per
face (the terminal's is elelem's own, "You are a terminal coding agent."; the editor
faces say the agent works in the user's editor), and `session.start(face=...)` picks it.

A byte-stable prefix: every provider reuses a prompt prefix that is identical to the
last request's (prompt caching, a local server's KV cache), so the system prompt holds
only what changes when the user changes it (the template, the environment block of
context/environment.py, fixed for the session, AGENTS.md, the mode's text). What changes often
(the editor's state, an environment change such as a new git branch) is a *fresh note*:
`SystemPrompt.fresh` sections, rendered at the first request of a turn and put ahead of
the turn's prompt (the newest user message) inside a `<context-note>` block, as Claude
Code puts its IDE state. The note is taken when it differs from the last one the model
has (a note that no longer holds anything says so), and kept with that message for the
rest of the session, in memory only: the conversation and the store never see it. So
the requests of a session grow at their end and nowhere else. `request` is what a fetch
sends; `messages` shows it without taking a new note (`/context`). A change of the
prefix is logged once, naming what changed (context/prefix.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .base import regular
from .base.repository import repository_top
from .context.environment import Environment
from .context.prefix import PrefixWatch
from .conversation import Conversation, Message

AGENTS_BYTES = 256 << 10  # of AGENTS.md
log = logging.getLogger(__name__)
DEFAULT_TEMPLATE = "You are a terminal coding agent."
FACES = {  # what the system prompt says the agent is, in each face (start(face=...))
    "terminal": DEFAULT_TEMPLATE,
    "editor": "You are a coding agent working in the user's code editor.",
}
NOTE_OPEN, NOTE_CLOSE = "<context-note>\n", "\n</context-note>"
NO_LONGER = "What an earlier note said of the editor and the environment no longer holds."
SECTION_NAMES = {"Modes.section": "mode"}  # a stable section's name, in the change log


def face_template(face: str) -> str:
    """The system prompt's opening line for a face; the terminal's for one it does not know."""
    return FACES.get(face, DEFAULT_TEMPLATE)


def without_note(text: str) -> str:
    """A user message's text without the fresh note ahead of it (the stub's scripts)."""
    if text.startswith(NOTE_OPEN) and (end := text.find(NOTE_CLOSE)) >= 0:
        return text[end + len(NOTE_CLOSE) :].lstrip("\n")
    return text


class SystemPrompt:
    """Renders the system prompt from a template, the `environment` block (when the
    session has one), the nearest AGENTS.md (up to the repository's root: `agents_md`)
    and the stable `sections`, each after a blank line.

    The template is a string or a callable taking the working directory (which then
    replaces AGENTS.md too). Rendering reads AGENTS.md every time, so an edit is seen on
    the very next fetch. Each of `sections` (callables returning text: the mode's) is
    called on every render too. `fresh` sections (the editor's state) are not part of
    it: they are the newest user message's note (`notes`).
    """

    def __init__(
        self,
        template: str | Callable[[Path], str] | None = None,
        cwd: Path | None = None,
        environment: Environment | None = None,
    ):
        self.template = template or DEFAULT_TEMPLATE
        self.cwd = Path(cwd or Path.cwd())
        self.environment = environment
        self.sections: list[Callable[[], str]] = []
        self.fresh: list[Callable[[], str]] = []
        if environment is not None:
            self.fresh.append(environment.changes)

    def parts(self) -> list[tuple[str, str]]:
        """The system prompt's parts, each named (what changed is said by name)."""
        if callable(self.template):
            parts = [("template", self.template(self.cwd))]
        else:
            parts = [("template", self.template)]
        if self.environment is not None:
            parts.append(("environment", self.environment.render()))
        if not callable(self.template):
            parts.append(("AGENTS.md", self.agents_md()))
        for n, section in enumerate(list(self.sections), 1):
            name = getattr(section, "__qualname__", "")
            parts.append((SECTION_NAMES.get(name, f"section {n}"), _rendered(section)))
        return parts

    def render(self) -> str:
        return _joined(self.parts())

    def notes(self) -> str:
        """The fresh sections' text, for the newest user message; empty when none says."""
        return "\n\n".join(text for section in list(self.fresh) if (text := _rendered(section)))

    def agents_md(self) -> str:
        """The nearest AGENTS.md from the working directory up to the repository's root
        (the folder holding `.git`), never above it; outside a repository, only the
        working directory's own. A folder above the project is not the project's. Read
        with the bounded, non-blocking reader (base/regular.py): at most AGENTS_BYTES,
        and a FIFO or a device is no AGENTS.md."""
        for folder in self.agents_folders():
            path = folder / "AGENTS.md"
            if path.is_file():
                try:
                    return regular.text(path, AGENTS_BYTES).strip()
                except OSError:
                    return ""
        return ""

    def agents_folders(self) -> list[Path]:
        """Where AGENTS.md is looked for, nearest first: up to the repository's top
        (base/repository.py: a `.git` of someone else's is no repository)."""
        top = repository_top(self.cwd)
        if top is None:
            return [self.cwd]
        folders = [self.cwd]
        for folder in self.cwd.parents:
            if not folder.is_relative_to(top):
                break
            folders.append(folder)
        return folders


def _rendered(section: Callable[[], str]) -> str:
    """A section's text; a failing section is logged and left out, never the fetch."""
    try:
        return str(section() or "")
    except Exception as exc:
        log.warning("system prompt: a section failed: %s", exc)
        return ""


def _joined(parts: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(text for _, text in parts if text)


def _from_the_end(conversation: Conversation) -> Iterable[Message]:
    return (conversation[at] for at in range(len(conversation) - 1, -1, -1))


def noted(message: Message, note: str) -> Message:
    """The message with a note ahead of its content (a string, or parts). The note's
    text cannot close its block early (an editor's selection is anyone's text)."""
    inner = note.replace("</context-note", "<\\/context-note")
    block = f"{NOTE_OPEN}{inner}{NOTE_CLOSE}"
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [{"type": "text", "text": block}, *content]}
    return {**message, "content": f"{block}\n\n{content or ''}"}


class Transcript:
    def __init__(
        self,
        system_prompt: SystemPrompt,
        conversation: Conversation | None = None,
        notes: dict[int, tuple[Message, str]] | None = None,
        watch: PrefixWatch | None = None,
    ):
        self.system_prompt = system_prompt
        self.conversation = conversation if conversation is not None else Conversation()
        # id(message) -> (that message, kept alive so the id stays its own; its note)
        self.notes: dict[int, tuple[Message, str]] = {} if notes is None else notes
        self.watch = watch if watch is not None else PrefixWatch()

    def messages(self, scratch: Iterable[Message] = ()) -> list[Message]:
        """What the next fetch sends, no new note taken: system prompt, kept conversation
        (with the notes it was sent with), this turn's tool traffic."""
        return self._built(self.system_prompt.render(), scratch)

    def request(
        self, scratch: Iterable[Message] = (), tools: Sequence[dict[str, Any]] = ()
    ) -> list[Message]:
        """What one fetch sends: the fresh note taken first (module docstring), and the
        prefix compared with the last request's (a change logged once)."""
        parts = self.system_prompt.parts()
        self.watch.check(parts, tools)
        self._take_note()
        return self._built(_joined(parts), scratch)

    def _built(self, system: str, scratch: Iterable[Message]) -> list[Message]:
        kept = list(self.conversation)
        if self.notes:  # the few noted messages, in place (found from the end: the newest)
            left = len(self.notes)
            for at in range(len(kept) - 1, -1, -1):
                entry = self.notes.get(id(kept[at]))
                if entry is not None and entry[0] is kept[at]:
                    kept[at] = noted(kept[at], entry[1])
                    left -= 1
                    if not left:
                        break
        return [{"role": "system", "content": system}, *kept, *scratch]

    def _take_note(self) -> None:
        kept = self.conversation
        newest = next((m for m in _from_the_end(kept) if m.get("role") == "user"), None)
        if newest is None or id(newest) in self.notes:
            return  # the turn's note is taken: its rounds send the same bytes
        if self.notes:
            here = {id(m) for m in kept}
            for key in [key for key in self.notes if key not in here]:
                del self.notes[key]  # its message is gone (/clear, /compact, a rewind)
        found = (
            next((m for m in _from_the_end(kept) if id(m) in self.notes), None)
            if self.notes
            else None
        )
        last = self.notes[id(found)][1] if found is not None else ""
        fresh = self.system_prompt.notes()
        if fresh != ("" if last == NO_LONGER else last):
            self.notes[id(newest)] = (newest, fresh or NO_LONGER)

    def aside(self) -> Transcript:
        """The same system prompt and a copy of the conversation, heard by no listener:
        a turn on it changes nothing kept (nor stored)."""
        copy = Conversation(list(self.conversation))
        return Transcript(self.system_prompt, copy, dict(self.notes), self.watch)

    @property
    def context(self) -> list[Message]:
        """What the model will see on the next turn."""
        return self.messages()
