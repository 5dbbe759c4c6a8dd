"""Built-in tool `task` (elelem 0.10): the model hands a self-contained job (research, a
search across the code) to a sub-agent, and reads only its final answer.

The child is an Agent of its own: a fresh conversation (the prompt given, nothing of the
parent's), the parent's provider and model, a system prompt that says what it is
(CHILD_PROMPT, then the project's AGENTS.md as the parent's has), and the parent's
read-only tools only (kinds `read`, `search`, `fetch`: it changes nothing; no `task`
nor `todo`, kind `think`: the plan is the parent's), through the parent's hooks (the
permission policy and the mode still decide). It has its own round cap (CHILD_ROUNDS).
The tool's result is `{result}`: the child's final answer, cut past MAX_ANSWER
characters; a child whose provider failed is a failed call (`{error}`).

Bounds: one level only (a child has no `task` tool, and a `task` call inside a task is
refused: DEPTH); a prompt of at most MAX_PROMPT characters. Nothing of the child is kept
in the parent's conversation or the stored session (its calls are tool traffic).

Its events are nested under the call: when the parent's Output has `nested(call_id)`,
the child talks to what that returns (the daemon: the same events with
`parentToolCallId`; ACP: the parent call's `tool_call_update` content); otherwise to
`Nested`, which passes on the child's tool calls and messages and keeps its streamed
text to itself. Cancelling the parent's turn cancels the child where it is: its
provider stream is closed and its tools' processes killed, as the parent's would be.
"""

from __future__ import annotations

import contextvars
from typing import Any

from ..agent import Agent
from ..io import NullOutput, Output
from ..ports import SessionView
from ..registry import Plugin
from ..result import Result
from ..tool import CURRENT_CALL, Tool
from ..transcript import SystemPrompt

READ_ONLY = frozenset({"read", "search", "fetch"})  # not think: task, todo (the plan)
CHILD_ROUNDS = 25
MAX_ANSWER = 20_000  # characters of the child's answer the parent reads
MAX_PROMPT = 32_000
DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("elelem_task_depth", default=0)
CHILD_PROMPT = (
    "You are a sub-agent of a coding agent. You were given one self-contained task: "
    "search, analyze, report. You can read and search; you cannot change anything. "
    "Your final answer is all the caller sees: make it complete and concise."
)
DESCRIPTION = (
    "Delegate a self-contained job (research, a search across the code) to a sub-agent "
    "with read-only tools and a fresh conversation; only its final answer comes back"
)


class Nested(NullOutput):
    """A child's Output for a parent Output without `nested`: its tool calls and what it
    says go to the parent's; its streamed text and thinking stay with it."""

    def __init__(self, parent: Output) -> None:
        self.parent = parent

    def say(self, text: str, kind: str = "plain") -> None:
        self.parent.say(text, kind)

    def doing(self, call: dict[str, Any]) -> None:
        self.parent.doing(call)

    def result(self, call: dict[str, Any], result: Result) -> None:
        self.parent.result(call, result)


def child_output(parent: Output, call_id: str) -> Output:
    nested = getattr(parent, "nested", None)
    if callable(nested):
        return nested(call_id)  # type: ignore[no-any-return]
    return Nested(parent)


def read_only(tool: Tool) -> bool:
    return tool.kind in READ_ONLY and tool.name != "task"


async def run_task(session: SessionView, args: dict[str, Any]) -> dict[str, Any]:
    prompt = args["prompt"]
    if DEPTH.get() >= 1:
        return {"error": "a task cannot start another task: do this part yourself"}
    if not prompt.strip():
        return {"error": "the task's prompt is empty"}
    if len(prompt) > MAX_PROMPT:
        return {"error": f"the task's prompt is over {MAX_PROMPT} characters"}
    call = CURRENT_CALL.get() or {}
    output = child_output(session.output, str(call.get("id") or "task"))
    child = Agent(
        session.provider,
        session.toolbox.subset(read_only),
        output,
        SystemPrompt(CHILD_PROMPT, session.cwd),
        max_rounds=CHILD_ROUNDS,
    )
    token = DEPTH.set(DEPTH.get() + 1)
    try:
        result = await child.turn(prompt)
    finally:
        DEPTH.reset(token)
        flush = getattr(output, "flush", None)
        if callable(flush):
            flush()
    answer = result.reply
    if len(answer) > MAX_ANSWER:
        answer = f"{answer[:MAX_ANSWER]}\n[cut: {len(answer) - MAX_ANSWER} more characters]"
    if result.stop_reason == "error":
        return {"error": answer.removeprefix("Error: ")}
    done: dict[str, Any] = {"result": answer}
    if result.stop_reason != "end_turn":
        done["stopReason"] = result.stop_reason
    return done


def register(plugin: Plugin) -> None:
    plugin.tool(
        "task",
        DESCRIPTION,
        {"prompt": {"type": "string", "description": "The job, complete in itself"}},
        ["prompt"],
        kind="think",
    )(run_task)
