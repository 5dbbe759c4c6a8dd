"""Steering in the core (steering.py): a steer sent while a tool runs goes with the next
provider request, after the tool round; the conversation keeps prompt, steer, reply;
bounds and refusals lose nothing and change nothing."""

from __future__ import annotations

import asyncio

import pytest
from support.outputs import Scripted, SpyOutput

from elelem_daemon.base.errors import AttachmentError, InvalidParams, NotRunning, SteerRefused
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start
from elelem_daemon.turns.steering import MAX_QUEUED, MAX_TEXT

CALL = {"type": "doing", "id": "c1", "name": "wait", "arguments": {}}


OPEN: list = []


@pytest.fixture(autouse=True)
async def closed():
    """Each session is closed (its checkpoints' upkeep ends with it)."""
    yield
    while OPEN:
        await asyncio.wait_for(OPEN.pop().close(), 10)


def session_with(provider: Scripted, tmp_path):
    registry = core_registry(entry_points=False).child()
    registry.plugin("test").provider("scripted", lambda model=None: provider)
    output = SpyOutput()
    session = start(registry, "scripted", cwd=tmp_path, plugin_files=False, output=output)
    OPEN.append(session)
    gate = asyncio.Event()
    running = asyncio.Event()

    async def wait(args):
        running.set()
        await gate.wait()
        return {"waited": True}

    session.toolbox.add("wait", "waits for the test", {}, (), (), wait)
    return session, output, gate, running


async def test_a_steer_sent_while_a_tool_runs_reaches_the_next_request(tmp_path):
    provider = Scripted([CALL], [{"type": "saying", "text": "the reply"}])
    session, output, gate, running = session_with(provider, tmp_path)
    heard: list[str] = []
    session.agent.steering.listeners.append(heard.append)
    turn = asyncio.ensure_future(session.turn("the prompt"))
    await asyncio.wait_for(running.wait(), 5)
    steer = session.steer("also look at b.py")
    assert not steer.sent and heard == []
    gate.set()
    result = await asyncio.wait_for(turn, 5)
    assert result.reply == "the reply" and steer.sent and heard == ["also look at b.py"]
    second = provider.requests[1][0]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "user"]
    assert second[-1]["content"] == "also look at b.py"
    kept = [(m["role"], m["content"]) for m in session.conversation]
    assert kept == [
        ("user", "the prompt"),
        ("user", "also look at b.py"),
        ("assistant", "the reply"),
    ]


async def test_a_steer_while_the_last_answer_streams_gets_one_round_more(tmp_path):
    streaming = asyncio.Event()
    release = asyncio.Event()

    class Slow(Scripted):
        async def fetch(self, messages, tools):
            self.requests.append(([dict(m) for m in messages], tools))
            if len(self.requests) == 1:
                yield {"type": "saying", "text": "first"}
                streaming.set()
                await release.wait()
                return
            yield {"type": "saying", "text": "second"}

    provider = Slow()
    session, _, _, _ = session_with(provider, tmp_path)
    turn = asyncio.ensure_future(session.turn("go"))
    await asyncio.wait_for(streaming.wait(), 5)
    session.steer("and then this")
    release.set()
    result = await asyncio.wait_for(turn, 5)
    assert result.reply == "second"
    second = provider.requests[1][0]
    assert [(m["role"], m["content"]) for m in second[1:]] == [
        ("user", "go"),
        ("assistant", "first"),
        ("user", "and then this"),
    ]
    assert [m["role"] for m in session.conversation] == ["user", "user", "assistant"]


async def test_no_turn_running_is_not_running_and_keeps_nothing(tmp_path):
    session, *_ = session_with(Scripted(), tmp_path)
    with pytest.raises(NotRunning) as caught:
        session.steer("hello")
    assert caught.value.kind == "not_running"
    assert len(session.conversation) == 0 and not session.agent.steering.waiting


async def test_bad_steers_are_refused_and_the_turn_goes_on(tmp_path):
    provider = Scripted([CALL], [{"type": "saying", "text": "fine"}])
    session, _, gate, running = session_with(provider, tmp_path)
    turn = asyncio.ensure_future(session.turn("p"))
    await asyncio.wait_for(running.wait(), 5)
    for bad in ("", "   ", "x" * (MAX_TEXT + 1)):
        with pytest.raises(InvalidParams):
            session.steer(bad)
    for n in range(MAX_QUEUED):
        session.steer(f"s{n}")
    with pytest.raises(SteerRefused) as caught:
        session.steer("one too many")
    assert caught.value.kind == "steer_queue_full"
    gate.set()
    assert (await asyncio.wait_for(turn, 5)).reply == "fine"
    sent = [m["content"] for m in provider.requests[1][0] if m["role"] == "user"][1:]
    assert sent == [f"s{n}" for n in range(MAX_QUEUED)]


async def test_a_steer_no_request_took_is_said_and_dropped_on_cancel(tmp_path):
    provider = Scripted([CALL])
    session, output, _, running = session_with(provider, tmp_path)
    turn = asyncio.ensure_future(session.turn("p"))
    await asyncio.wait_for(running.wait(), 5)
    steer = session.steer("too late")
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert not steer.sent and not session.agent.steering.waiting
    assert ("say", ("steer not sent (the turn ended first): too late", "info")) in output.calls
    assert [m["role"] for m in session.conversation] == ["user", "assistant"]


async def test_compact_summary_turn_takes_no_steer(tmp_path):
    started = asyncio.Event()
    release = asyncio.Event()

    class Held(Scripted):
        async def fetch(self, messages, tools):
            started.set()
            await release.wait()
            yield {"type": "saying", "text": "summary"}

    session, *_ = session_with(Held(), tmp_path)
    compact = asyncio.ensure_future(session.command("/compact"))
    await asyncio.wait_for(started.wait(), 5)
    with pytest.raises(NotRunning):
        session.steer("not for the summary")
    release.set()
    await asyncio.wait_for(compact, 5)


async def test_a_steer_sent_as_the_turn_starts_goes_with_its_first_request(tmp_path):
    provider = Scripted([{"type": "saying", "text": "both read"}])
    session, *_ = session_with(provider, tmp_path)
    starting, go = asyncio.Event(), asyncio.Event()

    async def hold(turn_id):
        starting.set()
        await go.wait()

    session.hooks["turn_start"].append(hold)
    turn = asyncio.ensure_future(session.turn("the prompt"))
    await asyncio.wait_for(starting.wait(), 5)  # begun, not yet at the agent
    session.steer("right after it")
    go.set()
    assert (await asyncio.wait_for(turn, 5)).reply == "both read"
    first = provider.requests[0][0]
    assert [(m["role"], m["content"]) for m in first[1:]] == [
        ("user", "the prompt"),
        ("user", "right after it"),
    ]


async def test_a_steer_for_a_refused_turn_is_dropped_and_said(tmp_path):
    session, output, *_ = session_with(Scripted(), tmp_path)
    turn = asyncio.ensure_future(session.turn("read it", [{"type": "file", "path": "missing.txt"}]))
    await asyncio.sleep(0)  # expanding the attachment (read off the loop)
    session.steer("orphan")
    with pytest.raises(AttachmentError):
        await asyncio.wait_for(turn, 5)
    assert ("say", ("steer not sent (the turn ended first): orphan", "info")) in output.calls
    assert not session.agent.steering.waiting and len(session.conversation) == 0
    with pytest.raises(NotRunning):
        session.steer("after")


async def test_a_withdrawn_steer_is_never_sent_nor_kept_and_a_taken_one_stays(tmp_path):
    """`Steering.withdraw`: the one rule both editor faces use for a cancelled steer."""
    provider = Scripted([CALL], [CALL], [{"type": "saying", "text": "the reply"}])
    session, output, gate, running = session_with(provider, tmp_path)
    heard: list[str] = []
    session.agent.steering.listeners.append(heard.append)
    turn = asyncio.ensure_future(session.turn("the prompt"))
    await asyncio.wait_for(running.wait(), 5)
    kept, gone = session.steer("keep this"), session.steer("forget it")
    assert session.agent.steering.withdraw(gone) is True
    assert session.agent.steering.withdraw(gone) is False  # once only
    running.clear()
    gate.set()
    await asyncio.wait_for(running.wait(), 5)  # the second round took the first steer
    assert kept.sent and not gone.sent and heard == ["keep this"]
    assert session.agent.steering.withdraw(kept) is False  # the model read it already
    result = await asyncio.wait_for(turn, 5)
    assert result.reply == "the reply"
    assert [m["content"] for m in provider.requests[1][0] if m["role"] == "user"] == [
        "the prompt",
        "keep this",
    ]
    assert [(m["role"], m["content"]) for m in session.conversation] == [
        ("user", "the prompt"),
        ("user", "keep this"),
        ("assistant", "the reply"),
    ]
    assert not any("forget it" in str(call) for call in output.calls)
