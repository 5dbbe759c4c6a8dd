"""The first message: a good `initialize` is answered before pygls loads (stdio.greet);
anything else is the protocol's, with the same answers as at any other time."""

from __future__ import annotations

import pytest

from elelem_daemon import __version__
from elelem_daemon.jsonrpc.client import RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


async def test_a_first_initialize_then_a_turn(spawn) -> None:
    client = await spawn()
    result = await within(client.initialize(process_id=None))
    assert result["serverInfo"] == {"name": "elelem", "version": __version__}
    session = (await within(client.new_session()))["sessionId"]
    assert (await within(client.turn(session, "!echo hi")))["reply"] == "hi"


async def test_a_refused_first_initialize_gets_the_usual_error(spawn) -> None:
    client = await spawn()
    with pytest.raises(RpcError) as refused:
        await within(client.request("initialize", {"processId": True}))
    assert (refused.value.code, refused.value.kind) == (-32602, "invalid_params")
    assert refused.value.data["errors"] == ["processId: expected an integer, got a boolean"]
    assert "stub" in (await within(client.initialize()))["capabilities"]["providers"]


async def test_a_first_frame_that_is_not_json_gets_a_parse_error(spawn) -> None:
    client = await spawn()
    await client.write_raw(b'Content-Length: 9\r\n\r\n{"json":1')
    error = await within(client.errors.get())
    assert (error.code, error.kind) == (-32700, "parse_error")
    assert "stub" in (await within(client.initialize()))["capabilities"]["providers"]


async def test_a_first_initialize_notification_is_not_answered(spawn) -> None:
    client = await spawn()
    await client.notify("initialize", {})
    assert await within(client.list_sessions()) == []
    assert client.errors.empty()
