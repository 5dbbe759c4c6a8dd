"""Context editing through the real daemon (issue 20): `/context delete` as a command,
`session/editContext` (delete by place, replace a text, an empty one deletes), bad
requests refused with nothing lost, and `session/load` showing the edited conversation."""

from __future__ import annotations

from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


async def three_turns(client: Client, session: str) -> None:
    for word in ("one", "two", "three"):
        await within(client.turn(session, f"!echo {word}"))


def texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] != "system"]


async def edit(client: Client, session: str, **params: Any) -> list[dict[str, Any]]:
    answer = await within(client.request("session/editContext", {"sessionId": session, **params}))
    return answer["messages"]


async def test_edits_by_command_and_by_request_and_load_shows_them(
    client: Client, session: str
) -> None:
    await three_turns(client, session)
    done = await within(client.command(session, "/context delete 4-5"))
    assert done["output"] == "  → deleted messages 4, 5"
    messages = await edit(client, session, index=2, content="ONE")
    assert messages[0]["role"] == "system"
    assert texts(messages) == ["!echo one", "ONE", "!echo three", "three"]
    messages = await edit(client, session, delete=[1])
    assert texts(messages) == ["ONE", "!echo three", "three"]
    messages = await edit(client, session, index=1, content="")
    assert texts(messages) == ["!echo three", "three"]
    assert texts(await within(client.context(session))) == ["!echo three", "three"]
    await within(client.close_session(session))
    loaded = await within(client.load_session(session))
    assert texts(loaded["messages"]) == ["!echo three", "three"]
    assert [e["content"] for e in loaded["history"] if e["type"] == "message"] == [
        "!echo three",
        "three",
    ]


async def test_bad_edits_are_refused_and_lose_nothing(client: Client, session: str) -> None:
    await three_turns(client, session)
    before = await within(client.context(session))
    for params, kind, says in [
        ({"delete": [0]}, "invalid_edit", "message 0 is the system prompt"),
        ({"index": 0, "content": "x"}, "invalid_edit", "system prompt"),
        ({"delete": [7]}, "invalid_edit", "no message 7: the messages are 1 to 6"),
        ({"index": -1, "content": "x"}, "invalid_edit", "no message -1"),
        ({"delete": []}, "invalid_edit", "a list of message places"),
        ({"delete": ["1"]}, "invalid_edit", "a list of message places"),
        ({"delete": [True]}, "invalid_edit", "a list of message places"),
        ({"delete": list(range(1, 99))}, "invalid_edit", "more places than"),
        ({"index": 1}, "invalid_edit", "either delete"),
        ({"delete": [1], "index": 1, "content": "x"}, "invalid_edit", "either delete"),
        ({}, "invalid_edit", "either delete"),
        ({"delete": "1"}, "invalid_params", "delete: expected an array"),
        ({"index": "1", "content": "x"}, "invalid_params", "index: expected an integer"),
    ]:
        with pytest.raises(RpcError) as caught:
            await within(client.request("session/editContext", {"sessionId": session, **params}))
        assert caught.value.code == -32602, params
        assert caught.value.data["kind"] == kind, params
        assert says in caught.value.message, (params, caught.value.message)
    assert await within(client.context(session)) == before
    bad = await within(client.command(session, "/context delete 1,x"))
    assert bad["output"].startswith("error: ")
    assert await within(client.context(session)) == before


async def test_no_edit_while_a_turn_runs(client: Client, session: str) -> None:
    await three_turns(client, session)
    turn = await client.start_turn(session, "!stream 2000 5")
    async for event in turn.events():
        if event["method"] == "event/saying":
            break
    with pytest.raises(RpcError) as caught:
        await within(client.request("session/editContext", {"sessionId": session, "delete": [1]}))
    assert caught.value.data["kind"] == "session_busy"
    await turn.cancel()
    await within(turn)
    assert texts(await within(client.context(session)))[0] == "!echo one"
