"""Provider faults, through the real daemon against local servers: each ends its turn
with one clear `Error: …` reply (or is handled as the core specifies) within a bounded
time, and the same session then completes a normal turn. The canary API key planted
in the daemon's environment shows up nowhere it can be seen."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from providers.replay import Cut, ReplayServer, Reply, Sleep, json_reply
from providers.samples import FIRST

from elelem_daemon.jsonrpc.client import Client

from .conftest import Tap, stored, within
from .front import TLS_ALERT, TLS_HELLO, Front
from .replies import big_reply, calls, text_stream

pytestmark = pytest.mark.e2e

CANARY = "sk-canary-faults-4Jd8QnW2"
NORMAL = "The README says: # Demo"
BAD_CHUNKS = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"
LIMITED = {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    server = ReplayServer()
    yield server
    server.stop()


@pytest.fixture
def front(replay: ReplayServer) -> Iterator[Front]:
    server = Front(replay.port)
    yield server
    server.stop()


@pytest.fixture
def read_timeout() -> str:
    """1 s, for the tests of a stalled server. A test that is about size, not stalls,
    parametrizes it longer: the replay server shares this test's loop with the client's
    reading of the daemon's flood, and on a loaded machine that took more than 1 s."""
    return "1"


@pytest.fixture
async def daemon(
    spawn: Any, env: dict[str, str], front: Front, read_timeout: str
) -> tuple[Client, Tap]:
    clean = {k: v for k, v in env.items() if not k.startswith(("OPENAI", "ANTHROPIC", "OLLAMA"))}
    clean.update(
        OPENAI_API_KEY=CANARY,
        OPENAI_BASE_URL=f"{front.url}/v1",
        OPENAI_MODEL="local",
        ANTHROPIC_API_KEY=CANARY,
        ANTHROPIC_BASE_URL="http://no-such-host.invalid",
        OLLAMA_HOST=front.url,
        OLLAMA_MODEL="qwen3",
        OLLAMA_NUM_CTX="8192",  # the window known: no background POST /api/show takes a reply
        ELELEM_READ_TIMEOUT=read_timeout,
        ELELEM_CONNECT_TIMEOUT="2",
        ELELEM_RETRIES="1",
        ELELEM_RETRY_MAX_DELAY="2",
        ELELEM_LOG_LEVEL="debug",
    )
    client = await spawn(env=clean, stderr=asyncio.subprocess.PIPE)
    tap = Tap()
    tap.attach(client)
    await within(client.initialize())
    return client, tap


class Run:
    """Turns in one session, recording every event and result."""

    def __init__(self, client: Client, session: str) -> None:
        self.client = client
        self.session = session
        self.events: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any]] = []

    async def turn(self, text: str = "hi", seconds: float = 30) -> tuple[dict[str, Any], float]:
        started = time.monotonic()
        events: list[dict[str, Any]] = []
        reply = await within(self.client.turn(self.session, text, on_event=events.append), seconds)
        self.events += events
        self.replies.append(reply)
        return reply, time.monotonic() - started

    def results(self, since: int) -> list[dict[str, Any]]:
        return [e["params"] for e in self.events[since:] if e["method"] == "event/result"]


ERROR = re.compile(r"Error: [^\n]+")  # one line, after the agent's own `Error: ` prefix


def faults(front: Front, replay: ReplayServer) -> dict[str, tuple[Callable[[], None], str]]:
    """name -> (what to arrange, a regular expression the reply must match)."""
    url = f"{front.url}/v1/chat/completions"
    quoted = re.escape(url)
    return {
        "401": (
            lambda: replay.queue(json_reply(401, {"error": {"message": "Incorrect API key"}})),
            r"Error: openai 401: Incorrect API key",
        ),
        "429 without retry-after (retried, then given up)": (
            lambda: replay.queue(json_reply(429, LIMITED), json_reply(429, LIMITED)),
            r"Error: openai 429: Rate limit reached",
        ),
        "429 with retry-after 1 (waited, then served)": (
            lambda: replay.queue(json_reply(429, LIMITED, {"retry-after": "1"}), text_stream()),
            re.escape(NORMAL),
        ),
        "429 with retry-after past the cap": (
            lambda: replay.queue(json_reply(429, LIMITED, {"retry-after": "3600"})),
            r"Error: openai 429: Rate limit reached \(retry after 3600 s\)",
        ),
        "500": (
            lambda: replay.queue(*[json_reply(500, {"error": {"message": "boom"}})] * 2),
            r"Error: openai 500: boom",
        ),
        "529": (
            lambda: replay.queue(*[json_reply(529, {"error": {"message": "Overloaded"}})] * 2),
            r"Error: openai 529: Overloaded",
        ),
        "stream cut mid-reply": (
            lambda: replay.queue(Reply([FIRST["openai"], Cut()])),
            rf"Error: openai: the stream from {quoted} broke off: .+",
        ),
        "stream stalls past the read timeout": (
            lambda: replay.queue(Reply([FIRST["openai"], Sleep(5)])),
            rf"Error: openai: {quoted} sent nothing for 1 s \(ELELEM_READ_TIMEOUT\)",
        ),
        "malformed SSE": (
            lambda: replay.queue(Reply([FIRST["openai"], b"data: {not json}\n\n"])),
            r"Error: openai: malformed stream data: '\{not json\}'",
        ),
        "connection refused": (
            front.refuse,
            rf"Error: openai: cannot connect to {quoted}: Connection refused",
        ),
        "TLS bytes instead of HTTP": (
            lambda: front.set("garbage", TLS_HELLO + TLS_ALERT),
            rf"Error: openai: the stream from {quoted} broke off: .+",
        ),
        "HTTP garbage": (
            lambda: front.set(
                "garbage", b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"
            ),
            rf"Error: openai: the stream from {quoted} broke off: .+",
        ),
        "no answer at all": (
            lambda: front.set("stall"),
            rf"Error: openai: {quoted} sent nothing for 1 s \(ELELEM_READ_TIMEOUT\)",
        ),
    }


async def test_each_fault_ends_the_turn_clearly_and_the_session_goes_on(
    daemon: tuple[Client, Tap], front: Front, replay: ReplayServer, env: dict[str, str]
) -> None:
    client, tap = daemon
    session = (await within(client.new_session(provider="openai")))["sessionId"]
    run = Run(client, session)
    got, due = {}, {}
    for name, (arrange, pattern) in faults(front, replay).items():
        arrange()
        reply, took = await run.turn()
        front.listen() if name == "connection refused" else front.set("forward")
        replay.replies.clear()
        replay.queue(text_stream())
        after, _ = await run.turn("again")
        got[name] = (
            bool(re.fullmatch(pattern, reply["reply"])) or reply["reply"],
            reply["stopReason"],
            took < 15,
            after["reply"],
        )
        stop = "end_turn" if pattern == re.escape(NORMAL) else "error"
        due[name] = (True, stop, True, NORMAL)
    assert got == due
    await leaves_no_key(client, tap, session, run, env)


async def test_ndjson_and_dns_faults_in_ollama_and_anthropic_sessions(
    daemon: tuple[Client, Tap], replay: ReplayServer, env: dict[str, str]
) -> None:
    client, tap = daemon
    session = (await within(client.new_session(provider="ollama")))["sessionId"]
    run = Run(client, session)
    replay.queue(
        Reply([FIRST["ollama"], b'{"message":{"content":\n'], content_type="application/x-ndjson")
    )
    reply, _ = await run.turn()
    assert reply["reply"] == """Error: ollama: malformed NDJSON line: '{"message":{"content":'"""
    replay.queue(text_stream("ollama"))
    assert (await run.turn())[0]["reply"] == NORMAL

    session = (await within(client.new_session(provider="anthropic")))["sessionId"]
    run = Run(client, session)
    reply, took = await run.turn()
    assert re.fullmatch(
        r"Error: anthropic: cannot connect to http://no-such-host\.invalid/v1/messages: .+",
        reply["reply"],
    ), reply
    assert took < 15
    await within(client.command(session, "/provider openai"))  # the same session goes on
    replay.queue(text_stream())
    assert (await run.turn())[0]["reply"] == NORMAL
    await leaves_no_key(client, tap, session, run, env)


async def test_tool_calls_that_are_not_json_or_unknown_are_failed_results(
    daemon: tuple[Client, Tap], replay: ReplayServer, env: dict[str, str]
) -> None:
    client, tap = daemon
    session = (await within(client.new_session(provider="openai")))["sessionId"]
    run = Run(client, session)
    replay.queue(calls(("read", '{"path": '), ("no_such_tool", "{}")), text_stream())
    reply, _ = await run.turn()
    assert (reply["reply"], reply["stopReason"]) == (NORMAL, "end_turn")
    bad_json, unknown = run.results(0)
    assert bad_json["ok"] is False
    assert bad_json["result"]["error"].startswith("invalid JSON in tool arguments: ")
    assert unknown["ok"] is False and "no_such_tool" in unknown["result"]["error"]
    sent = replay.requests[-1].json["messages"]
    assert [m["role"] for m in sent[-3:]] == ["assistant", "tool", "tool"]
    await leaves_no_key(client, tap, session, run, env)


@pytest.mark.parametrize("read_timeout", ["60"])
async def test_10000_tool_calls_in_one_reply_each_run_and_answered(
    daemon: tuple[Client, Tap], replay: ReplayServer
) -> None:
    client, tap = daemon
    session = (await within(client.new_session(provider="openai")))["sessionId"]
    run = Run(client, session)
    replay.queue(calls(*[("no_such_tool", "{}")] * 10_000), text_stream())
    reply, _ = await run.turn(seconds=180)
    assert (reply["reply"], reply["stopReason"]) == (NORMAL, "end_turn")
    results = run.results(0)
    assert len(results) == 10_000 and not any(r["ok"] for r in results)
    sent = replay.requests[-1].json["messages"]
    assert sum(m["role"] == "tool" for m in sent) == 10_000
    replay.queue(text_stream())
    assert (await run.turn())[0]["reply"] == NORMAL
    assert len(await within(client.context(session))) == 5  # tool traffic is not kept


@pytest.mark.parametrize("read_timeout", ["60"])
async def test_a_50_mb_reply_arrives_whole(
    daemon: tuple[Client, Tap], replay: ReplayServer
) -> None:
    client, tap = daemon
    session = (await within(client.new_session(provider="openai")))["sessionId"]
    run = Run(client, session)
    replay.queue(big_reply(50))
    reply, _ = await run.turn(seconds=180)
    assert (len(reply["reply"]), reply["stopReason"]) == (50_000_000, "end_turn")
    assert set(reply["reply"]) == {"z"}
    replay.queue(text_stream())
    assert (await run.turn())[0]["reply"] == NORMAL


async def leaves_no_key(
    client: Client, tap: Tap, session: str, run: Run, env: dict[str, str]
) -> None:
    """The canary was sent (in a header) and is nowhere the user, a log or a file sees."""
    context = await within(client.context(session))
    await client.close()
    await tap.done()
    seen = b"\n".join(
        [
            bytes(tap.stdout),
            bytes(tap.stderr),
            json.dumps([run.events, run.replies, context]).encode(),
            stored(env),
        ]
    )
    assert b"cannot connect" in seen or b"Error" in seen or b"Demo" in seen
    assert CANARY.encode() not in seen
