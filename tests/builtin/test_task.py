"""The `task` tool's bounds (builtins/task.py): a blank or oversized prompt, a task
inside a task, a long answer cut, a failing child provider; the child's conversation
is fresh and its tools read-only."""

from __future__ import annotations

import asyncio

import pytest
from support.outputs import Scripted, SpyOutput

from elelem_daemon.builtins import task
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

OPEN: list = []


@pytest.fixture(autouse=True)
async def closed():
    yield
    while OPEN:
        await asyncio.wait_for(OPEN.pop().close(), 10)


def session_with(provider: Scripted, tmp_path):
    registry = core_registry(entry_points=False).child()
    registry.plugin("test").provider("scripted", lambda model=None: provider)
    output = SpyOutput()
    session = start(registry, "scripted", cwd=tmp_path, plugin_files=False, output=output)
    OPEN.append(session)
    return session, output


def call(prompt: str) -> dict:
    return {"type": "doing", "id": "t1", "name": "task", "arguments": {"prompt": prompt}}


async def result_of(session, prompt: str) -> dict:
    return (await session.toolbox.run("task", {"prompt": prompt})).to_dict()


async def test_bad_prompts_are_refused_before_any_request(tmp_path) -> None:
    provider = Scripted()
    session, _ = session_with(provider, tmp_path)
    assert (await result_of(session, "  "))["error"] == "the task's prompt is empty"
    long = await result_of(session, "x" * (task.MAX_PROMPT + 1))
    assert long["error"] == f"the task's prompt is over {task.MAX_PROMPT} characters"
    token = task.DEPTH.set(1)
    try:
        inner = await result_of(session, "deeper")
    finally:
        task.DEPTH.reset(token)
    assert inner["error"].startswith("a task cannot start another task")
    assert provider.requests == []


async def test_the_child_starts_fresh_with_read_only_tools(tmp_path) -> None:
    provider = Scripted(
        [{"type": "saying", "text": "hi"}],  # an earlier turn: the child sees none of it
        [call("look around")],  # the parent delegates
        [{"type": "saying", "text": "found it"}],  # the child answers
    )
    session, _ = session_with(provider, tmp_path)
    await session.turn("earlier")
    result = await session.turn("delegate")
    assert result.reply == "ok"
    child_messages, child_tools = provider.requests[2]
    assert [m["role"] for m in child_messages] == ["system", "user"]
    assert child_messages[0]["content"].startswith(task.CHILD_PROMPT)
    assert child_messages[1]["content"] == "look around"
    names = {t["function"]["name"] if "function" in t else t["name"] for t in child_tools}
    assert names and names <= {"read", "glob", "grep", "list"}  # no task, todo, write...
    parent_again = provider.requests[3][0]
    assert parent_again[-1]["role"] == "tool"
    assert parent_again[-1]["content"] == '{"result":"found it","ok":true}'


async def test_a_long_answer_is_cut_and_a_failing_child_is_a_failed_call(tmp_path) -> None:
    provider = Scripted([{"type": "saying", "text": "y" * (task.MAX_ANSWER + 5)}])
    session, _ = session_with(provider, tmp_path)
    cut = await result_of(session, "write a lot")
    assert cut["result"].endswith("\n[cut: 5 more characters]")
    assert len(cut["result"]) < task.MAX_ANSWER + 40
    provider.rounds.append(RuntimeError("the model is down"))
    failed = await result_of(session, "again")
    assert failed["ok"] is False and "the model is down" in failed["error"]
