"""Agent: runs one turn. Calls the provider, runs tools, repeats until done."""

from __future__ import annotations

import asyncio
import logging
from contextlib import aclosing
from pathlib import Path
from typing import Any

from .conversation import Conversation
from .io import NullInput, NullOutput
from .result import Result
from .toolbox import Toolbox
from .transcript import SystemPrompt, Transcript

log = logging.getLogger(__name__)
Message = dict[str, Any]

MAX_ROUNDS = 100
CANCELLED = "[cancelled]"
OVERFLOW_HINT = (
    " (the conversation is too long for the model's context: "
    "/compact to summarise it, or /clear to start over)"
)


class Agent:
    """Holds the provider, toolbox, output and transcript.

    After a turn, `stop_reason` says how it ended (`end_turn`, `error`, `cancelled`
    or `max_turn_requests`) and `usage` holds the token counts providers reported.
    """

    def __init__(
        self,
        provider: Any,
        toolbox: Toolbox | None = None,
        input: Any = None,
        output: Any = None,
        system_prompt: SystemPrompt | str | None = None,
        conversation: Conversation | None = None,
        cwd: Path | str | None = None,
        max_rounds: int = MAX_ROUNDS,
    ) -> None:
        self.provider = provider
        self.toolbox = toolbox if toolbox is not None else Toolbox()
        self.input = input if input is not None else NullInput()
        self.output = output if output is not None else NullOutput()
        if not isinstance(system_prompt, SystemPrompt):
            system_prompt = SystemPrompt(system_prompt, Path(cwd) if cwd else None)
        self.transcript = Transcript(system_prompt, conversation)
        self.max_rounds = max_rounds
        self.stop_reason = "end_turn"
        self.usage: dict[str, int] = {}
        self._said: list[str] = []

    @property
    def conversation(self) -> Conversation:
        return self.transcript.conversation

    @property
    def context(self) -> list[Message]:
        return self.transcript.context

    async def turn(self, prompt: str) -> str:
        self.conversation.add("user", prompt)  # 2. record the prompt
        self.stop_reason, self.usage, scratch = "end_turn", {}, []
        try:
            for rounds in range(1, self.max_rounds + 1):
                self.output.waiting()
                content, calls, kept = await self.fetch(scratch)  # 3-4. build, call provider
                self.output.reply(content)  # 5. print the reply so far
                if not calls:  # 6. stop, or run the tools and go again
                    break
                if rounds == self.max_rounds:
                    self.stop_reason = "max_turn_requests"
                    content += f"\n\n[stopped: {self.max_rounds} rounds of tool calls]"
                    break
                scratch += await self.process(content, calls, kept)
        except asyncio.CancelledError:
            self.stop_reason = "cancelled"
            self.conversation.add("assistant", f"{''.join(self._said)}{CANCELLED}")
            raise
        self.conversation.add("assistant", content)  # 7. record the reply
        return content

    async def fetch(self, scratch: list[Message]) -> tuple[str, list[dict[str, Any]], Message]:
        """One provider call: stream the events; return the text, tool calls and kept data."""
        messages = self.transcript.messages(scratch)
        self._said, calls, kept = [], [], {}
        try:
            stream = self.provider.fetch(messages, self.toolbox.definitions())
            async with aclosing(stream) as events:
                async for event in events:
                    self._on(event, calls, kept)
        except Exception as exc:
            text = str(exc)
            if getattr(exc, "data", {}).get("context_overflow"):
                text += OVERFLOW_HINT
            log.warning("agent: %s", text)
            self.output.say(text, "error")
            self.stop_reason = "error"
            return f"Error: {text}", [], {}
        return "".join(self._said), calls, kept

    def _on(self, event: dict[str, Any], calls: list[dict[str, Any]], kept: Message) -> None:
        kind = event.get("type")
        if kind == "saying":
            self._said.append(event["text"])
            self.output.saying(event["text"])
        elif kind == "thinking":
            self.output.thinking(event["text"])
        elif kind == "doing":
            calls.append(event)
        elif kind == "usage":
            for key, value in event.items():
                if key != "type" and isinstance(value, int):
                    self.usage[key] = self.usage.get(key, 0) + value
        elif kind == "keep":
            kept.update(event["data"])

    async def process(
        self, content: str, calls: list[dict[str, Any]], kept: Message
    ) -> list[Message]:
        """Run each call in order; the traffic lives only for this turn."""
        wire = [
            {"id": c["id"], "name": c["name"], "arguments": c.get("arguments", {})} for c in calls
        ]
        traffic: list[Message] = [
            {"role": "assistant", "content": content, "tool_calls": wire, **kept}
        ]
        for call, event in zip(wire, calls, strict=True):
            shown = {**call, "name": self.toolbox.resolve(call["name"]).name}
            self.output.doing(shown)
            result = await self.run(call, event.get("error"))
            self.output.result(shown, result)
            traffic.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "name": call["name"],
                    "content": result.to_json(),
                }
            )
        return traffic

    async def run(self, call: dict[str, Any], error: str | None = None) -> Result:
        """A provider may flag a call it could not parse; the model then reads the error."""
        if error:
            return Result.failure(error)
        return await self.toolbox.run(call["name"], call["arguments"])
