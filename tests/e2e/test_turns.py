"""session/turn: the events of a turn and their order, errors, busy sessions, concurrency."""

from __future__ import annotations

import asyncio

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


async def test_a_tool_turn_sends_every_event_in_order_before_its_response(
    client: Client, session: str
) -> None:
    seen: list[dict] = []
    result = await within(client.turn(session, "!tool list {}", on_event=seen.append))

    assert result == {"reply": "done.", "stopReason": "end_turn", "turnId": 1}
    assert [e["method"] for e in seen] == [
        "event/thinking",
        "event/saying",
        "event/doing",
        "event/result",
        "event/thinking",
        "event/saying",
    ]
    assert all(e["params"]["sessionId"] == session for e in seen)
    assert all(e["params"]["turnId"] == 1 for e in seen)
    thinking, saying, doing, done, _, last = (e["params"] for e in seen)
    assert thinking["text"] == "considering the request"
    assert saying["text"] == "let me check."
    assert doing == {
        "sessionId": session,
        "turnId": 1,
        "id": "stub-1",
        "name": "list",
        "arguments": {},
    }
    assert (done["id"], done["name"], done["ok"]) == ("stub-1", "list", True)
    assert done["result"]["ok"] is True and done["result"]["exit_status"] == 0
    assert last["text"] == "done."


async def test_turn_ids_count_the_sessions_turns(client: Client, session: str) -> None:
    first = await within(client.turn(session, "!echo one"))
    events: list[dict] = []
    second = await within(client.turn(session, "!echo two", on_event=events.append))
    assert (first["turnId"], second["turnId"]) == (1, 2)
    assert second["reply"] == "two"
    assert {e["params"]["turnId"] for e in events} == {2}


async def test_a_tool_alias_shows_its_tool_and_a_failed_tool_shows_ok_false(
    client: Client, session: str
) -> None:
    seen: list[dict] = []
    await within(client.turn(session, "!tool bash {}", on_event=seen.append))
    doing = next(e["params"] for e in seen if e["method"] == "event/doing")
    done = next(e["params"] for e in seen if e["method"] == "event/result")
    assert doing["name"] == "execute"
    assert done["ok"] is False and done["result"]["ok"] is False
    assert "command" in done["result"]["error"]


async def test_a_provider_failure_is_an_error_turn_with_an_event_say(
    client: Client, session: str
) -> None:
    seen: list[dict] = []
    result = await within(client.turn(session, "!fail boom", on_event=seen.append))
    assert result["stopReason"] == "error"
    assert result["reply"] == "Error: boom"
    says = [e["params"] for e in seen if e["method"] == "event/say"]
    assert says == [{"sessionId": session, "turnId": 1, "text": "boom", "kind": "error"}]


async def test_the_turn_iterator_yields_the_same_events(client: Client, session: str) -> None:
    turn = await client.start_turn(session, "!stream 5")
    texts = [e["params"]["text"] async for e in turn.events() if e["method"] == "event/saying"]
    result = await within(turn.result())
    assert texts == ["tok0 ", "tok1 ", "tok2 ", "tok3 ", "tok4 "]
    assert result["reply"] == "".join(texts)


async def test_a_second_turn_on_a_busy_session_is_refused(client: Client, session: str) -> None:
    running = await client.start_turn(session, "!stream 100 20")
    with pytest.raises(RpcError) as error:
        await within(client.turn(session, "!echo hi"))
    assert error.value.code == -32001
    assert error.value.kind == "session_busy"
    assert error.value.data["sessionId"] == session
    await client.cancel(session)
    assert (await within(running.result()))["stopReason"] == "cancelled"


async def test_two_sessions_turn_at_the_same_time(client: Client) -> None:
    a = (await within(client.new_session()))["sessionId"]
    b = (await within(client.new_session()))["sessionId"]
    first = await client.start_turn(a, "!stream 20 50")
    second = await client.start_turn(b, "!stream 20 50")
    results = await within(asyncio.gather(first.result(), second.result()))
    assert [r["stopReason"] for r in results] == ["end_turn", "end_turn"]
    # no head-of-line blocking: b's deltas arrive while a is still streaming
    order = [
        n["params"]["sessionId"] for n in client.notifications if n["method"] == "event/saying"
    ]
    assert order.index(b) < len(order) - 1 - order[::-1].index(a)


async def test_a_slow_turn_does_not_hold_up_another_session(client: Client) -> None:
    slow = (await within(client.new_session()))["sessionId"]
    quick = (await within(client.new_session()))["sessionId"]
    running = await client.start_turn(slow, '!tool execute {"command": "sleep 30"}')
    result = await within(client.turn(quick, "!echo quick"))
    assert result["reply"] == "quick"
    assert not running.future.done()
    await client.cancel(slow)
    assert (await within(running.result()))["stopReason"] == "cancelled"


async def test_input_ask_reaches_the_client_and_its_answer_the_tool(spawn) -> None:
    questions: list[dict] = []

    async def answer(params: dict) -> str:
        questions.append(params)
        return "yes"

    client = await spawn(on_ask=answer)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    seen: list[dict] = []
    result = await within(
        client.turn(session, '!tool interview {"question": "ok?"}', on_event=seen.append)
    )
    assert questions == [{"sessionId": session, "turnId": 1, "kind": "question", "prompt": "ok?"}]
    done = next(e["params"] for e in seen if e["method"] == "event/result")
    assert done["result"] == {"answer": "yes", "ok": True}
    assert result["stopReason"] == "end_turn"


async def test_input_ask_with_options_and_a_null_answer(spawn) -> None:
    asked: list[dict] = []

    def no_answer(params: dict) -> None:
        asked.append(params)
        return None

    client = await spawn(on_ask=no_answer)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    seen: list[dict] = []
    prompt = '!tool interview {"question": "pick", "options": ["a", "b"]}'
    await within(client.turn(session, prompt, on_event=seen.append))
    assert asked[0]["options"] == ["a", "b"]
    done = next(e["params"] for e in seen if e["method"] == "event/result")
    assert done["ok"] is False and done["result"]["error"] == "the user gave no answer"


async def test_without_the_capability_no_question_is_sent(spawn) -> None:
    client = await spawn()  # no on_ask: capabilities.input.ask is false
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    seen: list[dict] = []
    await within(client.turn(session, '!tool interview {"question": "ok?"}', on_event=seen.append))
    done = next(e["params"] for e in seen if e["method"] == "event/result")
    assert done["result"]["error"] == "the user gave no answer"


async def test_a_cancelled_turn_withdraws_its_question(spawn) -> None:
    asked = asyncio.Event()
    withdrawn = asyncio.Event()

    async def wait_forever(params: dict) -> str:
        asked.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            withdrawn.set()
            raise
        return "late"

    client = await spawn(on_ask=wait_forever)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    turn = await client.start_turn(session, '!tool interview {"question": "ok?"}')
    await within(asked.wait())
    await client.cancel(session)
    assert (await within(turn.result()))["stopReason"] == "cancelled"
    await within(withdrawn.wait())  # the daemon sent $/cancelRequest for input/ask


async def test_an_unknown_tool_shows_a_question_mark(client: Client, session: str) -> None:
    seen: list[dict] = []
    await within(client.turn(session, "!tool nosuch {}", on_event=seen.append))
    doing = next(e["params"] for e in seen if e["method"] == "event/doing")
    done = next(e["params"] for e in seen if e["method"] == "event/result")
    assert doing["name"] == done["name"] == "nosuch?"
    assert done["result"]["error"].startswith('unknown tool: "nosuch"')


async def test_a_client_cannot_cancel_the_daemons_own_question(spawn) -> None:
    client: Client | None = None

    async def answer(params: dict) -> str:
        assert client is not None
        for ask_id in list(client._asks):  # "cancel" the input/ask itself: ignored
            await client.notify("$/cancelRequest", {"id": ask_id})
        await asyncio.sleep(0.1)
        return "still yes"

    client = await spawn(on_ask=answer)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    seen: list[dict] = []
    result = await within(
        client.turn(session, '!tool interview {"question": "ok?"}', on_event=seen.append)
    )
    assert result["stopReason"] == "end_turn"
    done = next(e["params"] for e in seen if e["method"] == "event/result")
    assert done["result"] == {"answer": "still yes", "ok": True}


PROVIDER_PLUGIN = """
class Looping:
    name = "looping"

    def __init__(self, model=None):
        self.model = model or "loop"

    async def fetch(self, messages, tools):
        yield {"type": "usage", "input_tokens": 10, "output_tokens": 2}
        yield {"type": "saying", "text": "again"}
        if self.model == "loop":
            yield {"type": "doing", "id": "c1", "name": "nosuch", "arguments": {}}


def register(plugin):
    plugin.provider("looping", Looping)
"""


async def test_usage_is_summed_and_the_round_cap_ends_a_turn(client: Client, workdir) -> None:
    plugins = workdir / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "looping.py").write_text(PROVIDER_PLUGIN)
    once = (await within(client.new_session(provider="looping", model="once", trusted=True)))[
        "sessionId"
    ]
    result = await within(client.turn(once, "hi"))
    assert result["usage"] == {"input_tokens": 10, "output_tokens": 2}
    looping = (await within(client.new_session(provider="looping", trusted=True)))["sessionId"]
    result = await within(client.turn(looping, "hi"), 30)
    assert result["stopReason"] == "max_turn_requests"
    assert result["reply"].endswith("[stopped: 100 rounds of tool calls]")
    assert result["usage"] == {"input_tokens": 1000, "output_tokens": 200}
