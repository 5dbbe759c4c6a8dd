"""Transcript: the system prompt, rendered fresh, plus the conversation."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from .conversation import Conversation, Message

log = logging.getLogger(__name__)
DEFAULT_TEMPLATE = "You are a terminal coding agent."


class SystemPrompt:
    """Renders the system prompt from a template and the nearest AGENTS.md (up to the
    repository's root: `agents_md`).

    The template is a string or a callable taking the working directory. Rendering
    reads AGENTS.md every time, so an edit is seen on the very next fetch. Each of
    `sections` (callables returning text, e.g. the editor's state) is called on every
    render too; what they return, when not empty, follows after a blank line.
    """

    def __init__(
        self, template: str | Callable[[Path], str] | None = None, cwd: Path | None = None
    ):
        self.template = template or DEFAULT_TEMPLATE
        self.cwd = Path(cwd or Path.cwd())
        self.sections: list[Callable[[], str]] = []

    def render(self) -> str:
        if callable(self.template):
            head = self.template(self.cwd)
        else:
            agents = self.agents_md()
            head = f"{self.template}\n\n{agents}" if agents else self.template
        extra = [text for section in list(self.sections) if (text := _rendered(section))]
        return "\n\n".join([head, *extra]) if extra else head

    def agents_md(self) -> str:
        """The nearest AGENTS.md from the working directory up to the repository's root
        (the folder holding `.git`), never above it; outside a repository, only the
        working directory's own. A folder above the project is not the project's."""
        for folder in self.agents_folders():
            path = folder / "AGENTS.md"
            if path.is_file():
                try:
                    return path.read_text(encoding="utf-8", errors="replace").strip()
                except OSError:
                    return ""
        return ""

    def agents_folders(self) -> list[Path]:
        """Where AGENTS.md is looked for, nearest first."""
        folders = [self.cwd]
        for folder in (self.cwd, *self.cwd.parents):
            if folder != self.cwd:
                folders.append(folder)
            if os.path.lexists(folder / ".git"):
                return folders
        return [self.cwd]


def _rendered(section: Callable[[], str]) -> str:
    """A section's text; a failing section is logged and left out, never the fetch."""
    try:
        return str(section() or "")
    except Exception as exc:
        log.warning("system prompt: a section failed: %s", exc)
        return ""


class Transcript:
    def __init__(self, system_prompt: SystemPrompt, conversation: Conversation | None = None):
        self.system_prompt = system_prompt
        self.conversation = conversation if conversation is not None else Conversation()

    def messages(self, scratch: Iterable[Message] = ()) -> list[Message]:
        """What one fetch sends: system prompt, kept conversation, this turn's tool traffic."""
        return [
            {"role": "system", "content": self.system_prompt.render()},
            *self.conversation,
            *scratch,
        ]

    def aside(self) -> Transcript:
        """The same system prompt and a copy of the conversation, heard by no listener:
        a turn on it changes nothing kept (nor stored)."""
        return Transcript(self.system_prompt, Conversation(list(self.conversation)))

    @property
    def context(self) -> list[Message]:
        """What the model will see on the next turn."""
        return self.messages()
