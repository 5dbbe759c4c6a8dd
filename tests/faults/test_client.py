"""Client faults: a client that vanishes, lies about lengths, sends too much or asks
about sessions that are gone. The daemon never crashes, stays within a bounded
memory, and answers every well-formed request exactly once."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError
from elelem_daemon.jsonrpc.framing import MAX_BODY, encode

from .conftest import all_gone, rss_kib, tree_with, within

pytestmark = pytest.mark.e2e


def request(msg_id: Any, method: str = "session/list", **params: Any) -> bytes:
    return encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


def open_sessions(listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The open sessions of a `session/list` answer (stored ones have `stored: true`)."""
    return [s for s in listed if not s.get("stored")]


def sized(msg_id: int, size: int) -> bytes:
    """A session/list request whose body is exactly `size` bytes."""
    empty = len(request(msg_id, pad="").split(b"\r\n\r\n", 1)[1])
    framed = request(msg_id, pad="x" * (size - empty))
    assert framed.startswith(b"Content-Length: %d\r\n" % size)
    return framed


# -- the client goes away ------------------------------------------------------------
async def test_eof_while_the_daemon_waits_for_an_answer_exits_and_kills_nothing_twice(
    spawn: Any,
) -> None:
    asked = asyncio.Event()

    async def never(params: dict[str, Any]) -> str:
        asked.set()
        await asyncio.sleep(3600)
        return "late"

    client = await spawn(on_ask=never)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    await client.start_turn(session, '!tool interview {"question": "ok?"}')
    await within(asked.wait())
    assert client.process.stdin is not None
    client.process.stdin.close()
    assert await within(client.process.wait(), 5) == 0


async def test_eof_in_the_middle_of_a_streamed_reply(client: Client, session: str) -> None:
    turn = await client.start_turn(session, "!stream 100000 5")
    async for event in turn.events():
        if event["method"] == "event/saying":
            break
    assert client.process.stdin is not None
    client.process.stdin.close()
    assert await within(client.process.wait(), 5) == 0


CLIENT = """
import asyncio
from elelem_daemon.jsonrpc.client import Client


async def main():
    client = await Client.spawn("--provider", "stub")
    await client.initialize()
    session = (await client.new_session())["sessionId"]
    turn = await client.start_turn(session, '!tool execute {"command": "sleep 81"}')
    async for event in turn.events():
        if event["method"] == "event/doing":
            break
    print(client.process.pid, flush=True)
    await asyncio.sleep(3600)


asyncio.run(main())
"""


async def test_a_killed_client_takes_the_daemon_and_its_tools_with_it(
    env: dict[str, str], workdir: Path
) -> None:
    editor = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLIENT, env=env, cwd=str(workdir), stdout=asyncio.subprocess.PIPE
    )
    try:
        assert editor.stdout is not None
        daemon = int(await within(editor.stdout.readline(), 30))
        pids = await tree_with(daemon, "sleep 81")
        editor.send_signal(signal.SIGKILL)
        await within(editor.wait())
        assert await all_gone({daemon, *pids}) == []  # EOF: it exits, its tool killed
    finally:
        if editor.returncode is None:
            editor.kill()
            await editor.wait()


# -- frames too large, or shorter than they say ---------------------------------------
async def test_the_frame_limit_is_announced_and_defaults_to_64_mib(client: Client) -> None:
    result = await within(client.initialize())
    assert result["capabilities"]["maxFrameBytes"] == MAX_BODY == 64 * 1024 * 1024


@pytest.mark.parametrize("how", ["option", "environment"])
async def test_the_frame_limit_is_configurable_and_enforced(raw: Any, how: str) -> None:
    daemon = await (raw("--max-frame", "300") if how == "option" else raw(ELELEM_MAX_FRAME="300"))
    await daemon.write(request(1, "initialize"))
    assert (await within(daemon.message()))["result"]["capabilities"]["maxFrameBytes"] == 300
    fits, big = sized(2, 300), sized(3, 301)
    await daemon.write(fits + big + request(4))
    answers = [await within(daemon.message()) for _ in range(3)]  # in any order
    (error,) = [a["error"] for a in answers if a["id"] is None]
    assert (error["code"], error["message"]) == (-32700, "message too large: 301 bytes (limit 300)")
    results = {a["id"]: a["result"] for a in answers if a["id"] is not None}
    assert results == {2: {"sessions": []}, 4: {"sessions": []}}  # 3's bytes were skipped


@pytest.mark.parametrize("args, variable", [(("--max-frame", "0"), ""), ((), "lots")])
async def test_a_bad_frame_limit_stops_the_daemon_at_start(
    env: dict[str, str], args: tuple[str, ...], variable: str
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "elelem_daemon",
        *args,
        env={**env, "ELELEM_MAX_FRAME": variable},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await within(process.communicate())
    assert process.returncode == 2
    assert stdout == b""
    assert b"expected a positive number of bytes" in stderr


async def test_a_length_larger_than_its_body_costs_one_error_not_the_next_requests(
    raw: Any,
) -> None:
    daemon = await raw()
    good = b"".join(request(f"g{i}") for i in range(10))
    await daemon.write(b'Content-Length: 500\r\n\r\n{"jsonrpc": "2.0", "id": "lost",' + good)
    answers = [await within(daemon.message()) for _ in range(11)]
    errors = [a for a in answers if "error" in a]
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(None, -32700)]
    assert sorted(a["id"] for a in answers if "result" in a) == sorted(f"g{i}" for i in range(10))
    await daemon.write(request("after"))
    assert (await within(daemon.message()))["id"] == "after"


# -- too many requests, none of the answers read -------------------------------------
PIPELINED = 10_000


async def test_10000_pipelined_requests_unread_stay_bounded_and_are_answered_once(
    raw: Any,
) -> None:
    daemon = await raw()
    await daemon.write(request(0, "session/new"))
    session = (await within(daemon.message()))["result"]["sessionId"]
    baseline = rss_kib(daemon.process.pid)
    methods = [
        ("session/list", {}),
        ("session/context", {"sessionId": session}),
        ("session/complete", {"sessionId": session, "text": "/co"}),
        ("session/context", {"sessionId": "gone"}),
        ("no/such/method", {}),
    ]
    pad = "p" * 1000  # 10 MB in all: more than the daemon reads ahead
    frames = b"".join(
        request(i, methods[i % 5][0], **methods[i % 5][1], pad=pad) for i in range(1, PIPELINED + 1)
    )
    writing = asyncio.ensure_future(daemon.write(frames))
    await asyncio.sleep(3)  # nobody reads: the daemon's stdout fills, then its stdin
    assert not writing.done()  # the client, not the daemon, holds what was not taken
    blocked = rss_kib(daemon.process.pid)
    answers: Counter[Any] = Counter()
    kinds: Counter[str] = Counter()
    while sum(answers.values()) < PIPELINED:
        message = await within(daemon.message(), 60)
        answers[message["id"]] += 1
        kinds["error" if "error" in message else "result"] += 1
    await within(writing)
    await daemon.write(request("last"))
    assert (await within(daemon.message()))["id"] == "last"  # nothing more came before it
    assert answers == Counter(range(1, PIPELINED + 1))  # each exactly once
    assert kinds == Counter(result=6000, error=4000)
    after = rss_kib(daemon.process.pid)
    limit = 64 * 1024  # KiB: generous, and far below the 10 MB sent
    assert blocked - baseline < limit and after - baseline < limit, (baseline, blocked, after)


# -- sessions that are gone ----------------------------------------------------------
async def test_every_method_on_a_closed_session_is_unknown_session(
    client: Client, session: str
) -> None:
    await within(client.close_session(session))
    for method, extra in [
        ("session/turn", {"text": "hi"}),
        ("session/command", {"line": "/context"}),
        ("session/complete", {"text": "/"}),
        ("session/context", {}),
        ("session/close", {}),
    ]:
        with pytest.raises(RpcError) as error:
            await within(client.request(method, {"sessionId": session, **extra}))
        assert (error.value.code, error.value.kind) == (-32002, "unknown_session"), method
    await client.cancel(session)  # a notification: nothing to answer, nothing breaks
    assert await within(client.list_sessions()) == []


async def test_requests_racing_a_close_are_each_answered_once(client: Client) -> None:
    session = (await within(client.new_session()))["sessionId"]
    turn = await client.start_turn(session, "!stream 100000 1")
    calls = [client.context(session) for _ in range(50)]
    calls.insert(25, client.close_session(session))
    results = await within(asyncio.gather(*calls, return_exceptions=True))
    assert all(not isinstance(r, Exception) or r.kind == "unknown_session" for r in results)
    assert (await within(turn.result()))["stopReason"] == "cancelled"
    assert open_sessions(await within(client.list_sessions())) == []


# -- methods sent as the wrong kind of message (found by the fuzzer) -----------------
async def test_a_request_sent_as_a_notification_does_nothing(client: Client) -> None:
    for method in ["shutdown", "session/new", "session/list"]:
        await client.notify(method, {})
    await client.notify("session/turn", {"sessionId": "x", "text": "hi"})
    assert await within(client.list_sessions()) == []  # not shut down, no session made
    assert client.errors.empty()


@pytest.mark.parametrize("method", ["exit", "session/cancel", "initialized"])
async def test_a_notification_sent_as_a_request_is_refused(client: Client, method: str) -> None:
    with pytest.raises(RpcError) as error:
        await within(client.request(method, {"sessionId": "x"}))
    assert (error.value.code, error.value.kind) == (-32600, "invalid_request")
    assert "is a notification" in error.value.message
    assert await within(client.list_sessions()) == []  # and the daemon is still there


async def test_sessions_opened_and_closed_by_the_hundred_do_not_grow_memory(
    client: Client,
) -> None:
    async def round_of(count: int) -> int:
        for _ in range(count):
            session = (await within(client.new_session()))["sessionId"]
            await within(client.turn(session, "!stream 50"))
            await within(client.close_session(session))
        return rss_kib(client.process.pid)

    first = await round_of(100)  # warm: caches, allocator arenas
    second = await round_of(100)
    third = await round_of(100)
    assert open_sessions(await within(client.list_sessions())) == []  # (stored: 300)
    assert third - first < 16 * 1024, (first, second, third)  # KiB


# -- the first message, which the daemon answers before pygls is loaded ---------------
FIRSTS = {
    "initialize with bad params": (
        request(1, "initialize", capabilities={"input": {"ask": "yes"}}),
        [(1, "invalid_params")],
    ),
    "initialize as a notification": (
        encode({"jsonrpc": "2.0", "method": "initialize", "params": {}}),
        [],
    ),
    "initialize with params null": (
        encode({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": None}),
        [(2, "invalid_request")],
    ),
    "garbage": (b"\x00\xff garbage\r\n\r\n", [(None, "parse_error")]),
    "a cut frame": (b"Content-Length: 5\r\n\r\n{", []),  # then the next frame fills it
    "exit with an id": (request(3, "exit"), [(3, "invalid_request")]),
}


@pytest.mark.parametrize("name", list(FIRSTS))
async def test_the_first_message_whatever_it_is(raw: Any, name: str) -> None:
    daemon = await raw()
    first, due = FIRSTS[name]
    await daemon.write(first + request("next") + request("next2"))
    got = []
    while not any(m.get("id") == "next2" for m in got):
        got.append(await within(daemon.message()))
    errors = [(m["id"], m["error"]["data"]["kind"]) for m in got if "error" in m]
    if name == "a cut frame":  # its body took the next frame's first bytes: then the rest
        due = [(None, "parse_error")] * max(1, len(errors))  # of that header is junk too
    assert errors == due
    assert {"next2"} <= {m.get("id") for m in got if "result" in m}
