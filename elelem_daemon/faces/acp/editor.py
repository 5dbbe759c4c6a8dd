"""The ACP face's Output and Input: the core calls them, they hand over to the AcpSession.

The Output turns the core's events into `session/update`s; the Input turns the core's
questions into `session/request_permission`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...io import NullInput, NullOutput
from . import updates

if TYPE_CHECKING:
    from .live import AcpSession


class AcpOutput(NullOutput):
    def __init__(self, face: AcpSession) -> None:
        self.face = face

    def say(self, text: str, kind: str = "plain") -> None:
        if text and text.strip():
            line = f"error: {text}" if kind == "error" else text
            self.face.update(updates.chunk("agent_message_chunk", f"\n{line}\n"))

    def thinking(self, text: str) -> None:
        self.face.update(updates.chunk("agent_thought_chunk", text))

    def saying(self, text: str) -> None:
        self.face.update(updates.chunk("agent_message_chunk", text))

    def doing(self, call: dict[str, Any]) -> None:
        self.face.started(call)

    def result(self, call: dict[str, Any], result: Any) -> None:
        self.face.finished(call, result)


class AcpInput(NullInput):
    """No lines to read (prompts arrive as requests); questions go to the client."""

    def __init__(self, face: AcpSession) -> None:
        super().__init__()
        self.face = face

    async def readline(self, prompt: str = "> ") -> str | None:
        return None

    async def ask(
        self,
        prompt: str,
        options: list[str] | None = None,
        kind: str = "question",
        tool: dict[str, Any] | None = None,
        **_: Any,
    ) -> str | None:
        return await self.face.ask(prompt, options, kind, tool)
