"""The stub provider: deterministic and offline, so a whole turn runs with no model.

What it does on every fetch:
1. yields `thinking` "considering the request";
2. if the last message is a tool result: yields `saying` "done." and stops; if it is
   a user message right after a tool result (a steer, steering.py), `saying`
   "steered: TEXT. done." and stops;
3. otherwise yields `saying` "let me check." and, if any tool exists, `doing` for the
   first tool with empty arguments.

A request whose tool choice is `none` (ports.TOOL_CHOICE: a compaction's summary) is
answered `saying` "done." alone.

Call ids are `stub-1`, `stub-2`, ... counted by the provider, so they are unique within
a session (one provider serves its turns and its tasks' children: a child's calls never
share an id with its parent's `task` call); the first call of a session is `stub-1`. A
new provider (`/provider`, `/model`, a resumed session) counts from 1 again.

A prompt that starts with `!` scripts it instead (for tests and benchmarks):
- `!tool NAME {json}`: step 3 calls NAME with those arguments;
- `!tools [["NAME", {json}], ...]`: one call per round, in order, each after the last
  one's result; then `done.`;
- `!echo TEXT`: says TEXT and asks for no tool;
- `!stream N [MS]`: says `tok0 `, `tok1 `, ... N deltas, MS milliseconds apart;
- `!fail MESSAGE`: raises, so the turn ends with `Error: MESSAGE`;
- `!events [JSON, ...]`: yields each object of the list as an event, as given (any
  text, control characters included: the hostile model of tests/faults), and sleeps
  that many milliseconds for each number in it.

A script it cannot read fails the same way, with a line that says how to write it
(`stub: !tool takes a tool name and a JSON object ...`), never Python's own words.

It reads images only as the model `vision` (`vision` is then true, and a prompt
carrying images is answered first with `saw N image(s): image/png 68 bytes, ...`);
otherwise a turn with an image fails before it is sent (expansion.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from ..base.errors import ProviderError
from ..conversation import image_bytes, images_in, text_of
from ..ports import TOOL_CHOICE
from ..transcript import without_note
from .calls import doing
from .window import Windowed

TOOL_USAGE = (
    'stub: !tool takes a tool name and a JSON object, e.g. !tool read {"path": "README.md"}'
)
STREAM_USAGE = "stub: !stream takes a count and a delay in milliseconds, e.g. !stream 100 5"
EVENTS_USAGE = (
    "stub: !events takes a JSON list of events and numbers,"
    ' e.g. !events [{"type": "saying", "text": "hi"}, 50]'
)


class StubProvider(Windowed):
    """The offline provider; its context window is ELELEM_CONTEXT_WINDOW's, when set."""

    name = "stub"

    def __init__(self, model: str | None = None) -> None:
        self.model = model or "stub"
        self.vision = self.model == "vision"
        self._calls = 0  # calls asked for so far: the next id is stub-(this + 1)

    def _next_id(self) -> str:
        self._calls += 1
        return f"stub-{self._calls}"

    async def fetch(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "thinking", "text": "considering the request"}
        if TOOL_CHOICE.get() == "none":  # no call may be made: a summary, in words
            yield {"type": "saying", "text": "done."}
            return
        messages = [unnoted(m) for m in messages]  # a script reads as it was typed
        last = messages[-1] if messages else {"role": "user", "content": ""}
        script = _script(messages)
        if script is not None:
            done = sum(1 for m in messages[_last_prompt(messages) :] if m["role"] == "tool")
            if done < len(script):
                step, arguments = script[done]
                yield {
                    "type": "doing",
                    "id": self._next_id(),
                    "name": step,
                    "arguments": arguments,
                }
            else:
                yield {"type": "saying", "text": "done."}
            return
        if last["role"] == "tool":
            yield {"type": "saying", "text": "done."}
            return
        if last["role"] == "user" and len(messages) > 1 and messages[-2]["role"] == "tool":
            yield {"type": "saying", "text": f"steered: {text_of(last.get('content'))}. done."}
            return
        images = images_in(last.get("content"))
        if images:
            seen = ", ".join(f"{p['mimeType']} {image_bytes(p)} bytes" for p in images)
            yield {"type": "saying", "text": f"saw {len(images)} image(s): {seen}. "}
        verb, _, rest = text_of(last.get("content")).partition(" ")
        if verb == "!fail":
            raise RuntimeError(rest or "stub failure")
        if verb == "!echo":
            yield {"type": "saying", "text": rest}
            return
        if verb == "!events":
            async for event in self._events(rest):
                yield event
            return
        if verb == "!stream":
            async for event in self._stream(*stream_args(rest)):
                yield event
            return
        if verb == "!tool":
            name, raw = tool_args(rest)
        yield {"type": "saying", "text": "let me check."}
        if verb == "!tool":
            yield doing(self._next_id(), name, raw)  # checked as every provider's are
        elif tools:
            yield {
                "type": "doing",
                "id": self._next_id(),
                "name": tools[0]["function"]["name"],
                "arguments": {},
            }

    @staticmethod
    async def _events(script: str) -> AsyncIterator[dict[str, Any]]:
        try:
            steps = json.loads(script)
        except (ValueError, RecursionError):
            raise ProviderError(f"{EVENTS_USAGE} (it is not JSON)") from None
        if not isinstance(steps, list):
            raise ProviderError(EVENTS_USAGE)
        for step in steps:
            if isinstance(step, dict):
                yield step
            elif isinstance(step, int | float):
                await asyncio.sleep(step / 1000)

    @staticmethod
    async def _stream(count: int = 10, delay_ms: float = 0) -> AsyncIterator[dict[str, Any]]:
        delay = delay_ms / 1000
        for i in range(count):
            yield {"type": "saying", "text": f"tok{i} "}
            if delay:
                await asyncio.sleep(delay)
            elif i % 256 == 255:
                await asyncio.sleep(0)  # let a cancel in


def tool_args(rest: str) -> tuple[str, str]:
    """`NAME {json}` of a `!tool` script: the name and the arguments' text, which goes
    to the agent as a model's would (calls.doing: a NaN or a depth past the wire's
    bound is a failed call the model reads). A clear ProviderError when the script is
    not that shape at all."""
    name, _, raw = rest.strip().partition(" ")
    if not name:
        raise ProviderError(TOOL_USAGE)
    try:
        arguments: Any = json.loads(raw) if raw.strip() else {}
    except RecursionError:  # deep, but JSON: the agent's bound says so to the model
        arguments = {}
    except ValueError:
        raise ProviderError(f"{TOOL_USAGE} (the arguments are not JSON)") from None
    if not isinstance(arguments, dict):
        raise ProviderError(f"{TOOL_USAGE} (the arguments are not an object)")
    return name, raw


def stream_args(rest: str) -> tuple[int, float]:
    """`N [MS]` of a `!stream` script, each a number >= 0 (N at most 10 million)."""
    words = rest.split()
    if len(words) > 2:
        raise ProviderError(STREAM_USAGE)
    try:
        count = int(words[0]) if words else 10
        delay = float(words[1]) if len(words) > 1 else 0.0
    except ValueError:
        raise ProviderError(STREAM_USAGE) from None
    if not 0 <= count <= 10_000_000 or not 0 <= delay <= 60_000:
        raise ProviderError(STREAM_USAGE)
    return count, delay


def unnoted(message: dict[str, Any]) -> dict[str, Any]:
    """A user message without the transcript's fresh note ahead of it."""
    content = message.get("content")
    if message.get("role") != "user":
        return message
    if isinstance(content, str):
        return {**message, "content": without_note(content)}
    if isinstance(content, list) and content and without_note(text_of(content[:1])) == "":
        return {**message, "content": content[1:]}
    return message


def _last_prompt(messages: list[dict[str, Any]]) -> int:
    for at in range(len(messages) - 1, -1, -1):
        if messages[at]["role"] == "user":
            return at
    return 0


def _script(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of a `!tools [...]` prompt, or None."""
    if not messages:
        return None
    verb, _, rest = text_of(messages[_last_prompt(messages)].get("content")).partition(" ")
    if verb != "!tools":
        return None
    return [(str(name), dict(args)) for name, args in json.loads(rest)]
