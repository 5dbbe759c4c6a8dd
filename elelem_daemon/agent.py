"""Agent: runs one turn. Calls the provider, runs tools, repeats until done.

`turn` returns a `TurnResult`: the reply, why the turn stopped and the tokens it used.
A cancelled turn keeps its prompt and `<text streamed so far>[cancelled]`, then
raises `TurnCancelled` (a `CancelledError`, so cancellation goes on up) carrying that
result; `outcome` (used by the faces through `Live`) turns it back into a result.
Any other failure inside a turn (a bug) ends it as `Error: ...` with stop reason
`error`: the kept history always alternates user, assistant, user, assistant.
Tool arguments that are not plain JSON (a non-finite number, nested past
`jsonsafe.MAX_DEPTH`) are a failed call the model reads; they go nowhere else.

While a turn runs, `in_turn` is true: a user message kept then is its prompt, which
awaits a reply (the store tells it from one kept outside a turn, such as `/compact`'s
summary). Each tool call, once it has run, goes to the `call_listeners` as (call,
result), after the Output: the store records it for redrawing; so does a call a cancel
cut short, as failed with `{"error": "cancelled"}` (a loaded session shows it so).

Steers (steering.py) the user sends while a turn runs go with its next provider
request, after the tool round, and are kept between the prompt and the reply.

The window (context/compaction.py): `gauge` holds the provider's count for the last
request. A kept turn's request the server refuses for size is not kept: the history
before the prompt is compacted and the request sent again, once; when that cannot be
done the prompt is dropped too (`kept` false) and the user told how to recover. A
request after a tool round that would pass ELELEM_COMPACT_AT of the window clears the
round's older tool results first (context/clearing.py), then, if still past it,
compacts that history (once a turn, counting the retry); a compaction's tokens count in
the turn's usage (`spent`). One
tool result takes at most a share of the window (ELELEM_TOOL_SHARE).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base.jsonsafe import problem
from .budget import RoundBudget
from .context import compaction
from .context.keepsakes import Keepsakes
from .conversation import Content, Conversation, Message
from .io import NullOutput, Output
from .result import Result
from .tool import CURRENT_CALL
from .toolbox import Toolbox
from .transcript import SystemPrompt, Transcript
from .turns.steering import Steering

if TYPE_CHECKING:
    from .ports import Provider

log = logging.getLogger(__name__)
Call = dict[str, Any]
CallListener = Callable[[Call, Result], None]

MAX_ROUNDS = 100
CANCELLED = "[cancelled]"
OVERFLOW_HINT = (
    " (the conversation is too long for the model's context: "
    "/compact to summarise it, or /clear to start over)"
)
NOT_KEPT = "; the prompt was not kept"
TOO_LONG = " (the prompt alone is too long for the model's context: it was not kept)"


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended. `stop_reason`: `end_turn`, `error` (the provider failed: the
    reply is `Error: ...`), `cancelled`, `max_tokens` (the provider said the reply was
    cut off by its token limit) or `max_turn_requests`; `overflow`: the server refused
    its last request as too long for the model's window. `usage`: the token counts the
    providers reported, summed. `context_tokens`: how full the model's context is after
    the turn: its last request's input and output tokens (None when unreported). For a
    cancelled turn `reply` is what was kept (`<text so far>[cancelled]`), and `kept` is
    false when the turn was cancelled before it started (nothing was recorded)."""

    reply: str
    stop_reason: str = "end_turn"
    usage: dict[str, int] = field(default_factory=dict)
    kept: bool = True
    context_tokens: int | None = None
    overflow: bool = False  # the server refused its last request as too long

    def __str__(self) -> str:
        return self.reply


NOT_STARTED = TurnResult(CANCELLED, "cancelled", kept=False)


class TurnCancelled(asyncio.CancelledError):
    """A turn was cancelled; `result` is what it kept."""

    def __init__(self, result: TurnResult) -> None:
        super().__init__("turn cancelled")
        self.result = result


async def outcome(turn: Awaitable[TurnResult]) -> TurnResult:
    """The turn's result, a cancelled turn's included: its `TurnCancelled` ends here.
    So await it only where a cancellation should end with the turn: `Live` runs it as
    the session's own task, which exists for that turn alone. Anywhere else (the REPL,
    a plugin), `TurnCancelled` goes on up like any cancellation."""
    try:
        return await turn
    except TurnCancelled as cancelled:
        return cancelled.result


class _Round:
    """What one fetch streamed: the text, the tool calls and the provider's kept data."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.calls: list[Call] = []
        self.kept: Message = {}
        self.stop: str | None = None  # a `stop` event's reason (`max_tokens`)
        self.usage: dict[str, int] = {}
        self.overflow = False  # the server refused the request for size

    def context_tokens(self) -> int | None:
        """This request's input and output tokens, if the provider reported them."""
        if "input_tokens" not in self.usage and "output_tokens" not in self.usage:
            return None
        return self.usage.get("input_tokens", 0) + self.usage.get("output_tokens", 0)


class Agent:
    """Holds the provider, toolbox, output and transcript. `last` is the last turn's
    result (None before the first)."""

    def __init__(
        self,
        provider: Provider,
        toolbox: Toolbox | None = None,
        output: Output | None = None,
        system_prompt: SystemPrompt | str | None = None,
        conversation: Conversation | None = None,
        cwd: Path | str | None = None,
        max_rounds: int = MAX_ROUNDS,
    ) -> None:
        self.provider = provider
        self.toolbox = toolbox if toolbox is not None else Toolbox()
        self.output: Output = output if output is not None else NullOutput()
        if not isinstance(system_prompt, SystemPrompt):
            system_prompt = SystemPrompt(system_prompt, Path(cwd) if cwd else None)
        self.transcript = Transcript(system_prompt, conversation)
        self.max_rounds = max_rounds
        self.last: TurnResult | None = None
        self.in_turn = False  # a user message kept now is a prompt, which awaits a reply
        self.call_listeners: list[CallListener] = []  # each hears (call, result) once it ran
        self.auto_compact = True  # compact ahead of the window (a face's switch: compaction.py)
        self.keeping = True  # false while a turn runs aside (keep=False): nothing is recorded
        self.steering = Steering()  # user messages for the running turn (steering.py)
        # which tools the model is offered, read at every request (the session's mode)
        self.tool_filter: Callable[[Any], bool] | None = None
        self.gauge = compaction.Gauge()  # how full the last request was (compaction.py)
        self.spent: dict[str, int] = {}  # a compaction's tokens, counted with the turn
        # what a compaction carries word for word (keepsakes.py): it hears the calls kept
        self.keepsakes = Keepsakes(lambda name: self.toolbox.resolve(name).kind)
        self.call_listeners.append(self.keepsakes.heard)

    @property
    def conversation(self) -> Conversation:
        return self.transcript.conversation

    @property
    def context(self) -> list[Message]:
        return self.transcript.context

    async def turn(self, prompt: Content, keep: bool = True) -> TurnResult:
        """One turn. With `keep` false it runs aside, on a copy of the conversation:
        its prompt and reply are never kept (nor stored), whatever happens (/compact),
        and its tool calls reach no `call_listeners`."""
        self.in_turn, self.keeping = True, keep
        try:
            return await self._turn(prompt, keep)
        finally:
            self.in_turn, self.keeping = False, True
            self.spent = {}

    async def _turn(self, prompt: Content, keep: bool) -> TurnResult:
        transcript = self.transcript if keep else self.transcript.aside()
        conversation = transcript.conversation
        conversation.add("user", prompt)  # 2. record the prompt
        retried = refused = False  # a request refused for size (compacted, sent again)
        scratch: list[Message] = []
        steered: list[str] = []  # steers sent (steering.py), kept before the reply
        usage = self.spent  # the turn's counts, a compaction's before or in it included
        stop = "end_turn"
        fetched = _Round()
        try:
            for rounds in range(1, self.max_rounds + 1):
                scratch += self.steers(steered)  # what the user sent meanwhile goes too
                if keep and scratch and not retried:  # past ELELEM_COMPACT_AT: compact
                    retried = await compaction.during_turn(self, scratch)
                self.output.waiting()
                fetched = _Round()
                content, failed = await self.fetch(scratch, fetched, usage, transcript)
                refused = fetched.overflow
                if fetched.overflow and keep:  # refused for size: nothing of it is kept
                    if not retried and await self.compact_refused(transcript):
                        retried = True
                        continue  # sent again on the compacted history
                    return self.refused(content, usage, steered)
                stop = "error" if failed else stop  # 3-4. call it (above)
                self.output.reply(content)  # 5. print the reply so far
                if not fetched.calls:  # 6. stop, or run the tools and go again
                    if self.steering.waiting and not failed and rounds < self.max_rounds:
                        scratch.append({"role": "assistant", "content": content, **fetched.kept})
                        continue  # a steer came while it answered: one round more
                    if fetched.stop == "max_tokens" and not failed:
                        stop = "max_tokens"
                    break
                if rounds == self.max_rounds:
                    stop = "max_turn_requests"
                    content += f"\n\n[stopped: {self.max_rounds} rounds of tool calls]"
                    break
                scratch += await self.process(content, fetched.calls, fetched.kept)
        except asyncio.CancelledError:
            self.last = TurnResult(f"{''.join(fetched.said)}{CANCELLED}", "cancelled", usage)
            self.keep_steers(conversation, steered)
            conversation.add("assistant", self.last.reply)
            raise TurnCancelled(self.last) from None
        except Exception as exc:  # a bug: the turn ends as an error, the history alternates
            log.exception("agent: the turn failed")
            content, stop = f"Error: {type(exc).__name__}: {exc}", "error"
            self.keep_steers(conversation, steered)
            conversation.add("assistant", content)
            self.last = TurnResult(content, stop, usage)
            self.output.say(content.removeprefix("Error: "), "error")
            return self.last
        self.keep_steers(conversation, steered)
        conversation.add("assistant", content)  # 7. record the reply
        self.last = TurnResult(
            content, stop, usage, context_tokens=fetched.context_tokens(), overflow=refused
        )
        return self.last

    async def compact_refused(self, transcript: Transcript) -> bool:
        """The request was refused for size: compact the history before the prompt
        (the newest kept message), unless ELELEM_COMPACT_RETRY says not to."""
        if not compaction.retry_on() or len(transcript.conversation) < 2:
            return False
        reason = "the model refused the request as too long; sending it again"
        return await compaction.compact(self, reason, spare=1, cached=False)

    def refused(self, content: str, usage: dict[str, int], steered: list[str]) -> TurnResult:
        """A request refused for size that compaction could not save: the prompt (the
        newest kept message) and the steers sent are dropped, and the user told."""
        conversation = self.transcript.conversation
        last = conversation.last
        if last is not None and last.get("role") == "user":
            conversation.edit(len(conversation) - 1, None)
        steered.clear()
        hint = OVERFLOW_HINT + NOT_KEPT if len(conversation) else TOO_LONG
        text = content.removeprefix("Error: ") + hint
        log.warning("agent: %s", text)
        self.output.say(text, "error")
        self.last = TurnResult(f"Error: {text}", "error", usage, kept=False, overflow=True)
        return self.last

    def steers(self, steered: list[str]) -> list[Message]:
        """The steers waiting (steering.py) as user messages for the next request."""
        taken = self.steering.take()
        steered += taken
        return [{"role": "user", "content": text} for text in taken]

    def keep_steers(self, conversation: Conversation, steered: list[str]) -> None:
        """Keep the steers the turn sent, in order, before its reply; the ones no
        request took are dropped, and the user told."""
        for text in steered:
            conversation.add("user", text)
        for text in self.steering.drop():
            self.output.say(f"steer not sent (the turn ended first): {text}", "info")

    async def fetch(
        self,
        scratch: list[Message],
        fetched: _Round,
        usage: dict[str, int],
        transcript: Transcript | None = None,
    ) -> tuple[str, bool]:
        """One provider call: stream the events into `fetched`; return the text, and
        whether the provider failed (the text is then `Error: ...`)."""
        tools = self.toolbox.definitions(self.tool_filter)
        messages = (transcript or self.transcript).request(scratch, tools)
        try:
            stream = self.provider.fetch(messages, tools)
            async with aclosing(stream) as events:
                async for event in events:
                    self._on(event, fetched, usage)
        except Exception as exc:
            text = str(exc)
            fetched.calls.clear()
            if getattr(exc, "data", {}).get("context_overflow"):
                fetched.overflow = True  # the turn says it, or compacts and goes on
                if (transcript or self.transcript) is self.transcript:
                    log.info("agent: %s", text)
                    return f"Error: {text}", True
                text += OVERFLOW_HINT
            log.warning("agent: %s", text)
            self.output.say(text, "error")
            return f"Error: {text}", True
        said = "".join(fetched.said)
        measured = compaction.size(messages, tools) + len(said) + len(repr(fetched.calls))
        self.gauge.measure(measured, fetched.context_tokens())
        return said, False

    def _on(self, event: dict[str, Any], fetched: _Round, usage: dict[str, int]) -> None:
        kind = event.get("type")
        if kind == "saying":
            fetched.said.append(event["text"])
            self.output.saying(event["text"])
        elif kind == "thinking":
            self.output.thinking(event["text"])
        elif kind == "doing":
            fetched.calls.append(event)
        elif kind == "usage":
            for key, value in event.items():
                if key != "type" and isinstance(value, int):
                    usage[key] = usage.get(key, 0) + value
                    fetched.usage[key] = fetched.usage.get(key, 0) + value
        elif kind == "keep":
            fetched.kept.update(event["data"])
        elif kind == "stop":
            fetched.stop = event.get("reason")

    async def process(self, content: str, calls: list[Call], kept: Message) -> list[Message]:
        """Run each call in order; the traffic lives only for this turn."""
        for call in calls:  # the wire stays JSON: no inf, NaN or deep nesting goes on
            if not call.get("error") and (bad := problem(call.get("arguments", {}))):
                call["error"], call["arguments"] = f"unusable tool arguments: {bad}", {}
        wire = [
            {"id": c["id"], "name": c["name"], "arguments": c.get("arguments", {})} for c in calls
        ]
        traffic: list[Message] = [
            {"role": "assistant", "content": content, "tool_calls": wire, **kept}
        ]
        budget = RoundBudget()  # the round's results are bounded (budget.py)
        for call, event in zip(wire, calls, strict=True):
            shown = {**call, "name": self.toolbox.resolve(call["name"]).name}
            self.output.doing(shown)
            try:
                result = (
                    budget.skipped() if budget.spent else await self.run(call, event.get("error"))
                )
            except asyncio.CancelledError:
                self.heard(shown, Result.failure("cancelled"))  # kept as cut short
                raise
            self.output.result(shown, result)
            if budget.each is None:  # a large one: cut to a share of the window
                budget.each = await compaction.tool_limit(self.provider, len(result.to_json()))
            self.heard(shown, result)
            traffic.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "name": call["name"],
                    "content": budget.admit(result),
                }
            )
        return traffic

    def heard(self, call: dict[str, Any], result: Result) -> None:
        """Tell the `call_listeners` of a call that ran (when the turn is kept)."""
        for listener in list(self.call_listeners) if self.keeping else []:
            listener(call, result)

    async def run(self, call: Call, error: str | None = None) -> Result:
        """A provider may flag a call it could not parse; the model then reads the error."""
        if error:
            return Result.failure(error)
        token = CURRENT_CALL.set(call)  # the call a tool's nested work is under (task)
        try:
            return await self.toolbox.run(call["name"], call["arguments"])
        finally:
            CURRENT_CALL.reset(token)
