"""Transcript: the system prompt, rendered fresh, plus the conversation."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from .conversation import Conversation, Message

DEFAULT_TEMPLATE = "You are a terminal coding agent."


class SystemPrompt:
    """Renders the system prompt from a template and the nearest AGENTS.md.

    The template is a string or a callable taking the working directory. Rendering
    reads AGENTS.md every time, so an edit is seen on the very next fetch.
    """

    def __init__(
        self, template: str | Callable[[Path], str] | None = None, cwd: Path | None = None
    ):
        self.template = template or DEFAULT_TEMPLATE
        self.cwd = Path(cwd or Path.cwd())

    def render(self) -> str:
        if callable(self.template):
            return self.template(self.cwd)
        agents = self.agents_md()
        return f"{self.template}\n\n{agents}" if agents else self.template

    def agents_md(self) -> str:
        for folder in (self.cwd, *self.cwd.parents):
            path = folder / "AGENTS.md"
            if path.is_file():
                try:
                    return path.read_text(encoding="utf-8", errors="replace").strip()
                except OSError:
                    return ""
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

    @property
    def context(self) -> list[Message]:
        """What the model will see on the next turn."""
        return self.messages()
