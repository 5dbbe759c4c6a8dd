import asyncio
import json

import pytest
from support.outputs import Scripted, SpyOutput

from elelem_daemon.agent import Agent, TurnCancelled, TurnResult, outcome
from elelem_daemon.providers.stub import StubProvider
from elelem_daemon.toolbox import Toolbox


def read_box():
    box = Toolbox()
    box.add(
        "read",
        "Read file",
        {"path": {"type": "string"}},
        ["path"],
        ["open"],
        lambda args: {"content": "# Demo", "path": args["path"]},
    )
    return box


def doing(id_, name, **arguments):
    return {"type": "doing", "id": id_, "name": name, "arguments": arguments}


async def test_a_turn_without_tools_records_prompt_and_reply(output):
    provider = Scripted(
        [
            {"type": "thinking", "text": "hm"},
            {"type": "saying", "text": "hel"},
            {"type": "saying", "text": "lo"},
        ]
    )
    agent = Agent(provider, output=output)
    result = await agent.turn("hi")
    assert result == TurnResult("hello", "end_turn", {})
    assert list(agent.conversation) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    assert output.calls == [
        ("thinking", "hm"),
        ("saying", "hel"),
        ("saying", "lo"),
        ("reply", "hello"),
    ]
    assert agent.last is result


async def test_each_fetch_sends_system_then_conversation_then_this_turns_tool_traffic(output):
    provider = Scripted(
        [{"type": "saying", "text": "Let me look."}, doing("toolu_01", "open", path="README.md")],
        [{"type": "saying", "text": "It is a demo."}],
    )
    agent = Agent(provider, read_box(), output=output)
    reply = (await agent.turn("show me the readme")).reply
    assert reply == "It is a demo."
    first, second = provider.requests
    assert first[0] == [
        {"role": "system", "content": "You are a terminal coding agent."},
        {"role": "user", "content": "show me the readme"},
    ]
    assert first[1][0]["function"]["name"] == "read"
    assert second[0][2:] == [
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [{"id": "toolu_01", "name": "open", "arguments": {"path": "README.md"}}],
        },
        {
            "role": "tool",
            "tool_call_id": "toolu_01",
            "name": "open",
            "content": '{"content":"# Demo","path":"README.md","ok":true}',
        },
    ]
    # the doing line shows the canonical name; the reply so far is printed every fetch
    assert ("doing", {"id": "toolu_01", "name": "read", "arguments": {"path": "README.md"}}) in (
        output.calls
    )
    assert [c for c in output.calls if c[0] == "reply"] == [
        ("reply", "Let me look."),
        ("reply", "It is a demo."),
    ]


async def test_only_prompt_and_final_reply_are_kept(output):
    provider = Scripted(
        [doing("1", "read", path="a")],
        [{"type": "saying", "text": "done"}],
        [{"type": "saying", "text": "second"}],
    )
    agent = Agent(provider, read_box(), output=output)
    await agent.turn("one")
    await agent.turn("two")
    assert [(m["role"], m["content"]) for m in agent.conversation] == [
        ("user", "one"),
        ("assistant", "done"),
        ("user", "two"),
        ("assistant", "second"),
    ]
    assert [m["role"] for m in provider.requests[-1][0]] == ["system", "user", "assistant", "user"]


async def test_tool_calls_run_in_order_one_at_a_time(output):
    order = []
    box = Toolbox()

    async def slow(args):
        order.append(("start", args["n"]))
        await asyncio.sleep(0.01 * (3 - args["n"]))
        order.append(("end", args["n"]))
        return {"n": args["n"]}

    box.add("slow", "", {"n": {"type": "integer"}}, ["n"], handler=slow)
    provider = Scripted([doing("a", "slow", n=1), doing("b", "slow", n=2)], [])
    await Agent(provider, box, output=output).turn("go")
    assert order == [("start", 1), ("end", 1), ("start", 2), ("end", 2)]
    tool_messages = [m for m in provider.requests[1][0] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["a", "b"]


async def test_validation_errors_and_unknown_tools_go_back_to_the_model(output):
    provider = Scripted([doing("1", "read"), doing("2", "nope", x=1)], [])
    agent = Agent(provider, read_box(), output=output)
    await agent.turn("go")
    contents = [json.loads(m["content"]) for m in provider.requests[1][0] if m["role"] == "tool"]
    assert contents == [
        {"error": "object at root is missing required properties: path", "ok": False},
        {"error": 'unknown tool: "nope". Available: read.', "ok": False},
    ]
    assert ("doing", {"id": "2", "name": "nope?", "arguments": {"x": 1}}) in output.calls


async def test_a_call_the_provider_could_not_parse_becomes_a_tool_error(output):
    bad = {**doing("1", "read"), "error": "invalid JSON in tool arguments: {"}
    provider = Scripted([bad], [])
    await Agent(provider, read_box(), output=output).turn("go")
    tool = [m for m in provider.requests[1][0] if m["role"] == "tool"][0]
    assert tool["content"] == '{"error":"invalid JSON in tool arguments: {","ok":false}'


async def test_provider_failure_ends_the_turn_with_an_error_reply_and_goes_on(output, caplog):
    provider = Scripted(
        [{"type": "saying", "text": "partial"}, RuntimeError("HTTP 529: busy")],
        [{"type": "saying", "text": "fine"}],
    )
    agent = Agent(provider, output=output)
    assert await agent.turn("hi") == TurnResult("Error: HTTP 529: busy", "error")
    assert agent.conversation.last == {"role": "assistant", "content": "Error: HTTP 529: busy"}
    assert ("say", ("HTTP 529: busy", "error")) in output.calls
    assert "agent: HTTP 529: busy" in caplog.text
    assert await agent.turn("again") == TurnResult("fine", "end_turn")


async def test_keep_and_usage_events(output):
    provider = Scripted(
        [
            {"type": "keep", "data": {"thinking_blocks": [{"signature": "s"}]}},
            {"type": "usage", "input_tokens": 10, "output_tokens": 2},
            doing("1", "read", path="a"),
        ],
        [{"type": "usage", "input_tokens": 20, "output_tokens": 3}],
    )
    agent = Agent(provider, read_box(), output=output)
    result = await agent.turn("go")
    assert provider.requests[1][0][2]["thinking_blocks"] == [{"signature": "s"}]
    assert result.usage == {"input_tokens": 30, "output_tokens": 5}
    assert (await agent.turn("again")).usage == {}  # counted per turn


async def test_the_round_cap_ends_a_turn_and_says_so(output):
    provider = Scripted(*[[doing(str(i), "read", path="a")] for i in range(5)])
    agent = Agent(provider, read_box(), output=output, max_rounds=3)
    result = await agent.turn("loop")
    assert result.reply.endswith("[stopped: 3 rounds of tool calls]")
    assert result.stop_reason == "max_turn_requests"
    assert len(provider.requests) == 3


async def test_a_reply_cut_off_by_the_token_limit_says_so(output):
    cut = {"type": "stop", "reason": "max_tokens"}
    provider = Scripted(
        [doing("1", "read", path="a"), cut],  # cut off in a round that goes on
        [{"type": "saying", "text": "half a rep"}, cut],
        [{"type": "saying", "text": "whole"}],
    )
    agent = Agent(provider, read_box(), output=output)
    result = await agent.turn("go")
    assert result == TurnResult("half a rep", "max_tokens")
    assert agent.conversation.last == {"role": "assistant", "content": "half a rep"}
    assert (await agent.turn("again")).stop_reason == "end_turn"


async def test_a_turn_aside_keeps_nothing(output):
    provider = Scripted([{"type": "saying", "text": "one"}], [{"type": "saying", "text": "two"}])
    agent = Agent(provider, output=output)
    await agent.turn("hi")
    kept = list(agent.conversation)
    assert (await agent.turn("summarise", keep=False)).reply == "two"
    assert list(agent.conversation) == kept
    sent = [m["content"] for m in provider.requests[1][0]]
    assert sent[1:] == ["hi", "one", "summarise"]  # it read the whole history


async def test_cancelling_keeps_the_prompt_and_the_partial_reply(output):
    started = asyncio.Event()

    class Slow:
        async def fetch(self, messages, tools):
            yield {"type": "saying", "text": "half"}
            started.set()
            await asyncio.sleep(30)
            yield {"type": "saying", "text": "never"}

    agent = Agent(Slow(), output=output)
    task = asyncio.create_task(agent.turn("go"))
    await started.wait()
    task.cancel()
    with pytest.raises(TurnCancelled) as cancelled:  # a CancelledError: it goes on up
        await task
    assert isinstance(cancelled.value, asyncio.CancelledError) and task.cancelled()
    assert cancelled.value.result == TurnResult("half[cancelled]", "cancelled", {})
    assert list(agent.conversation) == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "half[cancelled]"},
    ]


async def test_outcome_gives_a_cancelled_turn_its_result(output):
    started = asyncio.Event()

    class Slow:
        async def fetch(self, messages, tools):
            yield {"type": "saying", "text": "so far"}
            yield {"type": "usage", "input_tokens": 7}
            started.set()
            await asyncio.sleep(30)

    agent = Agent(Slow(), output=output)
    task = asyncio.create_task(outcome(agent.turn("go")))
    await started.wait()
    task.cancel()
    assert await task == TurnResult("so far[cancelled]", "cancelled", {"input_tokens": 7})
    assert str(await task) == "so far[cancelled]"


async def test_the_stub_drives_a_whole_turn():
    output = SpyOutput()
    agent = Agent(StubProvider(), read_box(), output=output)
    assert (await agent.turn("hi")).reply == "done."
    assert output.kinds() == [
        "thinking",
        "saying",
        "reply",
        "doing",
        "result",
        "thinking",
        "saying",
        "reply",
    ]
    assert output.calls[4] == (
        "result",
        {"error": "object at root is missing required properties: path", "ok": False},
    )


async def test_agent_works_alone_with_null_objects():
    agent = Agent(StubProvider())
    assert (await agent.turn("hi")).reply == "let me check."
    assert agent.context[0]["role"] == "system"
