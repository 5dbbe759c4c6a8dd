"""capabilities.events.coalesceMs: deltas joined to at most one notification per interval."""

from __future__ import annotations

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


async def start(spawn, coalesce_ms) -> tuple[Client, str]:  # noqa: ANN001
    client = await spawn()
    caps = {"events": {"coalesceMs": coalesce_ms}}
    await within(client.request("initialize", {"capabilities": caps}))
    return client, (await within(client.new_session()))["sessionId"]


async def test_deltas_are_joined_in_order_and_sent_before_the_response(spawn) -> None:  # noqa: ANN001
    client, session = await start(spawn, 100)
    seen: list[dict] = []
    result = await within(client.turn(session, "!stream 60 5", on_event=seen.append))

    saying = [e["params"]["text"] for e in seen if e["method"] == "event/saying"]
    expected = "".join(f"tok{i} " for i in range(60))
    assert "".join(saying) == expected == result["reply"]
    assert 2 <= len(saying) <= 10  # ~300 ms of deltas at one notification per 100 ms
    assert [e["method"] for e in seen][0] == "event/thinking"  # held text keeps event order


async def test_without_the_option_every_delta_is_a_notification(
    client: Client, session: str
) -> None:
    seen: list[dict] = []
    await within(client.turn(session, "!stream 30", on_event=seen.append))
    assert len([e for e in seen if e["method"] == "event/saying"]) == 30


async def test_a_cancelled_turn_still_sends_what_it_held(spawn) -> None:  # noqa: ANN001
    client, session = await start(spawn, 1000)
    turn = await client.start_turn(session, "!stream 100000 2")
    texts: list[str] = []
    async for event in turn.events():
        if event["method"] == "event/saying":
            texts.append(event["params"]["text"])
            await client.cancel(session)
    result = await within(turn.result())
    assert result["stopReason"] == "cancelled"
    assert result["reply"] == "".join(texts) + "[cancelled]"


@pytest.mark.parametrize("value", [-1, 1001, "16", True, None])
async def test_a_bad_interval_is_invalid_params(spawn, value) -> None:  # noqa: ANN001
    client = await spawn()
    params = {"capabilities": {"events": {"coalesceMs": value}}}
    if value is None:
        params = {"capabilities": {"events": 16}}
    with pytest.raises(RpcError) as raised:
        await within(client.request("initialize", params))
    assert raised.value.kind == "invalid_params"
    assert "capabilities.events" in str(raised.value)
