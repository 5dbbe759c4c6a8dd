"""Malformed frames: each gets the error response it is due, and the next good request
is still answered."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError
from elelem_daemon.jsonrpc.framing import encode

from .conftest import within

pytestmark = pytest.mark.e2e


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def request(msg_id: object, method: object = "session/list", **extra: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, **extra}).encode()


GOOD = request("good")

# name -> (bytes sent, [(id, code) of the error responses due])
CASES: dict[str, tuple[bytes, list[tuple[object, int]]]] = {
    "non-numeric length": (b"Content-Length: abc\r\n\r\n{}", [(None, -32700)]),
    "misspelled header": (b"Content-Lenght: 2\r\n\r\n{}", [(None, -32700)]),
    "two lengths": (b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", [(None, -32700)]),
    "no header at all": (GOOD.replace(b'"good"', b'"lost"') + b"\n", [(None, -32700)]),
    "length too long, next frame swallowed": (
        b'Content-Length: 90\r\n\r\n{"jsonrpc":',
        [(None, -32700)],
    ),
    "invalid JSON": (frame(b'{"jsonrpc": "2.0", "id": 1,'), [(None, -32700)]),
    "invalid UTF-8": (frame(b'{"jsonrpc": "2.0", "id": "\xff\xfe"}'), [(None, -32700)]),
    "a number": (frame(b"42"), [(None, -32600)]),
    "a string": (frame(b'"hello"'), [(None, -32600)]),
    "null": (frame(b"null"), [(None, -32600)]),
    "a batch": (frame(b"[" + GOOD + b"]"), [(None, -32600)]),
    "an empty object": (frame(b"{}"), [(None, -32600)]),
    "no jsonrpc": (frame(b'{"id": 3, "method": "session/list"}'), [(3, -32600)]),
    "method not a string": (frame(request(4, 5)), [(4, -32600)]),
    "id a boolean": (frame(request(True)), [(None, -32600)]),
    "id a float": (frame(request(1.5)), [(None, -32600)]),
    "id null": (frame(request(None)), [(None, -32600)]),
    "params a string": (frame(request(5, params="x")), [(5, -32600)]),
    "params an array": (frame(request(6, params=[1])), [(6, -32602)]),
    "params of the wrong types": (
        frame(request(7, "session/turn", params={"sessionId": [], "text": {}})),
        [(7, -32602)],
    ),
    "deeply nested": (frame(b"[" * 100000 + b"]" * 100000), [(None, -32700)]),
    "a huge method name": (frame(request(8, "x" * 1_000_000)), [(8, -32601)]),
    "a huge session id": (
        frame(request(9, "session/context", params={"sessionId": "s" * 1_000_000})),
        [(9, -32002)],  # unknown_session: one code in every method (issue 38)
    ),
    "an empty body": (b"Content-Length: 0\r\n\r\n", [(None, -32700)]),
    "a response nobody asked for": (frame(b'{"jsonrpc": "2.0", "id": 77, "result": 1}'), []),
    "a malformed response": (frame(b'{"jsonrpc": "2.0", "id": 78, "error": "bad"}'), []),
    "an unknown notification": (frame(b'{"jsonrpc": "2.0", "method": "nope/nope"}'), []),
}


async def _answers(client: Client, data: bytes) -> list[tuple[object, int]]:
    """Send data then a good request; return the errors received before its answer."""
    good = asyncio.get_running_loop().create_future()
    client._pending["good"] = good
    errors: list[tuple[object, int]] = []
    catch = {i: asyncio.get_running_loop().create_future() for i in range(1, 10)}
    client._pending.update(catch)
    await client.write_raw(data + frame(GOOD))
    assert await within(good) == {"sessions": []}
    await asyncio.sleep(0)
    while not client.errors.empty():
        errors.append((None, client.errors.get_nowait().code))
    for msg_id, future in catch.items():
        client._pending.pop(msg_id, None)
        if future.done() and isinstance(future.exception(), RpcError):
            errors.append((msg_id, future.exception().code))  # type: ignore[union-attr]
    return errors


async def test_each_malformed_frame_gets_its_error_and_the_daemon_goes_on(
    client: Client,
) -> None:
    got = {name: await _answers(client, data) for name, (data, _) in CASES.items()}
    assert got == {name: due for name, (_, due) in CASES.items()}


async def test_every_error_has_a_kind_and_a_bounded_message(client: Client) -> None:
    await client.write_raw(frame(request(1, "m" * 100_000)))
    future = client._pending[1] = asyncio.get_running_loop().create_future()
    with pytest.raises(RpcError) as error:
        await within(future)
    assert error.value.kind == "method_not_found"
    assert len(error.value.message) < 2000


async def test_a_huge_prompt_is_just_a_prompt(client: Client, session: str) -> None:
    text = "y" * 5_000_000
    result = await within(client.turn(session, f"!echo {text}"), 30)
    assert result["reply"] == text


async def test_headers_in_any_order_and_bare_newlines_are_accepted(client: Client) -> None:
    body = request("typed")
    data = (
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s"
        % (len(body), body)
    )
    data += b"\n\ncontent-length: %d\n\n%s" % (len(body), body.replace(b"typed", b"lower"))
    typed = client._pending["typed"] = asyncio.get_running_loop().create_future()
    lower = client._pending["lower"] = asyncio.get_running_loop().create_future()
    await client.write_raw(data)
    assert await within(typed) == {"sessions": []}
    assert await within(lower) == {"sessions": []}


async def test_a_frame_too_large_is_refused_without_waiting_for_it(client: Client) -> None:
    await client.write_raw(b"Content-Length: 999999999999\r\n\r\n{")
    error = await within(client.errors.get())
    assert (error.code, error.kind) == (-32700, "parse_error")
    assert "too large" in error.message
    assert client.process.stdin is not None  # it now skips the announced bytes as they come:
    client.process.stdin.close()  # so end the input instead of asking it to shut down
    assert await within(client.process.wait(), 5) == 0


async def test_end_of_input_inside_a_frame_is_answered_then_the_daemon_exits(
    client: Client,
) -> None:
    await client.write_raw(b'Content-Length: 100\r\n\r\n{"jsonrpc"')
    assert client.process.stdin is not None
    client.process.stdin.close()
    error = await within(client.errors.get())
    assert "end of input" in error.message
    assert await within(client.process.wait(), 5) == 0


async def test_random_garbage_never_stops_the_daemon(client: Client) -> None:
    rng = random.Random(20261130)
    for round_ in range(40):
        size = rng.choice([1, 10, 100, 1000, 20000])
        garbage = bytes(rng.randrange(256) for _ in range(size))
        if round_ % 3 == 0:  # garbage dressed as a frame
            garbage = b"Content-Length: %d\r\n\r\n" % rng.randrange(size + 1) + garbage
        garbage = garbage.lower().replace(b"content-length:", b"content-lengthx")
        await _answers(client, garbage + b"\r\n\r\n")
    assert await within(client.list_sessions()) == []


async def test_many_good_frames_in_one_write_are_all_answered(client: Client) -> None:
    futures = {}
    data = b""
    for i in range(200):
        futures[f"b{i}"] = client._pending[f"b{i}"] = asyncio.get_running_loop().create_future()
        data += encode({"jsonrpc": "2.0", "id": f"b{i}", "method": "session/list"})
    await client.write_raw(data)
    results = await within(asyncio.gather(*futures.values()))
    assert results == [{"sessions": []}] * 200
