"""Memory stays bounded (issue 13, item 6: the tool and provider parts). The daemon
runs under an address-space limit the test sets (RLIMIT_AS, 1 GiB: it idles at about
250 MiB of address space) and survives, answering, with the clear result each case
is due: a 4 GiB sparse `read`, 1,000 reads of a 1 MB file in one reply (the round's
results are capped), a provider that sends a 1 GiB SSE or NDJSON line, or a reply
past the stream cap. A daemon whose stderr is never read still answers after 10,000
warnings (logging goes through a queue that drops lines it cannot write)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from providers.replay import ReplayServer, Reply

from elelem_daemon.jsonrpc.client import Client

from .conftest import Raw, rss_kib, within
from .replies import calls, sse, text_stream

pytestmark = pytest.mark.e2e

LIMIT = 1 << 30
CAPPED = (
    "import os, resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({0}, {0}));"
    "os.execv(sys.executable, [sys.executable, '-m', 'elelem_daemon', *sys.argv[1:]])"
).format(LIMIT)
NORMAL = "The README says: # Demo"
MIB = 1 << 20


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    server = ReplayServer()
    yield server
    server.stop()


async def capped(env: dict[str, str], workdir: Path, replay: ReplayServer, **more: str) -> Client:
    """The daemon under a 1 GiB address-space limit, its openai provider at replay."""
    settings = {
        **env,
        "OPENAI_API_KEY": "sk-local",
        "OPENAI_BASE_URL": f"{replay.url}/v1",
        "OPENAI_MODEL": "local",
        "OLLAMA_HOST": replay.url,
        "OLLAMA_MODEL": "local",
        # the window known: no background POST /api/show (turns/usage.py) takes a queued reply
        "OLLAMA_NUM_CTX": "8192",
        "ELELEM_RETRIES": "0",
        **more,
    }
    client = await Client.spawn(
        "--provider",
        "openai",
        command=[sys.executable, "-c", CAPPED],
        env=settings,
        cwd=str(workdir),
    )
    await within(client.initialize())
    return client


async def turn(client: Client, session: str, text: str, seconds: float = 60) -> tuple[dict, list]:
    events: list[dict] = []
    reply = await within(client.turn(session, text, on_event=events.append), seconds)
    return reply, [e["params"] for e in events if e["method"] == "event/result"]


async def still_answers(
    client: Client, replay: ReplayServer, session: str, stub: bool = False
) -> None:
    if not stub:
        replay.queue(text_stream())
    reply, _ = await turn(client, session, "!echo ok" if stub else "hi")
    assert reply["reply"] == ("ok" if stub else NORMAL)
    assert rss_kib(client.process.pid) < 400 * 1024  # and it is not holding what it read


async def test_a_4_gib_sparse_file_is_read_in_part(
    env: dict[str, str], workdir: Path, replay: ReplayServer
) -> None:
    with open(workdir / "sparse.bin", "wb") as f:
        f.truncate(4 << 30)
    (workdir / "lines.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    client = await capped(env, workdir, replay)
    session = (await within(client.new_session(provider="stub")))["sessionId"]
    _, (whole,) = await turn(client, session, '!tool read {"path": "sparse.bin"}')
    assert len(whole["result"]["content"]) == 100_000
    assert whole["result"]["note"] == (
        "cut at 100000 bytes, in line 1; read on with offset=2 (the rest of line 1 is skipped)"
    )
    _, (past,) = await turn(client, session, '!tool read {"path": "sparse.bin", "offset": 2}')
    assert (past["result"]["content"], past["result"]["note"]) == ("", "the file has 1 lines")
    _, (edit,) = await turn(
        client, session, '!tool edit {"path": "sparse.bin", "old": "a", "new": "b"}'
    )
    assert edit["result"]["error"].endswith(
        "sparse.bin is 4294967296 bytes; whole-file reads and edits take at most 33554432 "
        "(ELELEM_FILE_CAP). Read it in parts with offset and limit"
    )
    _, (first,) = await turn(client, session, '!tool read {"path": "lines.txt"}')
    assert first["result"]["content"].splitlines()[-1] == "line 2000"
    assert first["result"]["note"] == (
        "showing lines 1-2000; the file goes on: read on with offset=2001"
    )
    _, (part,) = await turn(
        client, session, '!tool read {"path": "lines.txt", "offset": 4999, "limit": 10}'
    )
    assert part["result"] == {"content": "line 4999\nline 5000\n", "path": "lines.txt", "ok": True}
    await still_answers(client, replay, session, stub=True)
    await client.close()


async def test_a_thousand_reads_of_a_1_mb_file_in_one_reply_are_capped(
    env: dict[str, str], workdir: Path, replay: ReplayServer
) -> None:
    (workdir / "big.txt").write_text(("x" * 999 + "\n") * 1000)
    client = await capped(env, workdir, replay)
    session = (await within(client.new_session()))["sessionId"]
    replay.queue(calls(*[("read", json.dumps({"path": "big.txt"}))] * 1000), text_stream())
    reply, results = await turn(client, session, "read it all", 180)
    assert (reply["reply"], reply["stopReason"]) == (NORMAL, "end_turn")
    assert len(results) == 1000
    ran = [r for r in results if r["ok"]]
    assert 30 <= len(ran) <= 40  # 100 kB each; the round's results take at most 4,000,000
    assert all(r["result"]["note"].startswith("cut at 100000 bytes") for r in ran)
    skipped = {r["result"]["error"] for r in results[len(ran) :]}
    assert skipped == {
        "not run: this round's tool results reached 4000000 characters (ELELEM_ROUND_CAP); "
        "call it again in the next round, asking for less at a time"
    }
    body = replay.requests[-1].body
    assert len(body) < 4_500_000
    sent = json.loads(body)["messages"]
    assert sum(m["role"] == "tool" for m in sent) == 1000
    await still_answers(client, replay, session)
    await client.close()


def endless_line(prefix: bytes, kind: str) -> Reply:
    """One line of 1 GiB (never ended): the same 1 MiB chunk 1,024 times."""
    piece = b"a" * MIB
    return Reply([prefix, *[piece] * 1024, b"\n\n"], content_type=kind)


async def test_a_1_gib_stream_line_ends_the_turn_with_a_clear_error(
    env: dict[str, str], workdir: Path, replay: ReplayServer
) -> None:
    client = await capped(env, workdir, replay)
    session = (await within(client.new_session()))["sessionId"]
    replay.queue(endless_line(b'data: {"choices": [{"delta": {"content": "', "text/event-stream"))
    reply, _ = await turn(client, session, "hi")
    assert (reply["reply"], reply["stopReason"]) == (
        "Error: openai: a line of the stream passed 16777216 bytes (ELELEM_MAX_LINE)",
        "error",
    )
    await still_answers(client, replay, session)
    ollama = (await within(client.new_session(provider="ollama")))["sessionId"]
    replay.queue(endless_line(b'{"message": {"content": "', "application/x-ndjson"))
    reply, _ = await turn(client, ollama, "hi")
    assert reply["reply"] == (
        "Error: ollama: a line of the stream passed 16777216 bytes (ELELEM_MAX_LINE)"
    )
    await still_answers(client, replay, session)
    await client.close()


async def test_a_reply_past_the_stream_cap_ends_with_a_clear_error(
    env: dict[str, str], workdir: Path, replay: ReplayServer
) -> None:
    client = await capped(env, workdir, replay, ELELEM_MAX_REPLY=str(8 * MIB))
    session = (await within(client.new_session()))["sessionId"]
    delta = sse({"choices": [{"index": 0, "delta": {"content": "z" * 100_000}}]})
    replay.queue(Reply([delta] * 200))  # 20 MB of ordinary deltas
    reply, _ = await turn(client, session, "hi")
    assert (reply["reply"], reply["stopReason"]) == (
        "Error: openai: the answer passed 8388608 bytes (ELELEM_MAX_REPLY); it was cut off",
        "error",
    )
    await still_answers(client, replay, session)
    await client.close()


async def close(daemon: Raw) -> None:
    """Kill it, then read what is left of its stderr: asyncio waits for that pipe."""
    if daemon.process.returncode is None:
        daemon.process.kill()
    assert daemon.process.stderr is not None
    while await within(daemon.process.stderr.read(1 << 20)):
        pass
    await within(daemon.process.wait())


async def test_a_daemon_whose_stderr_is_never_read_still_answers(
    env: dict[str, str], workdir: Path
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "elelem_daemon",
        "--provider",
        "stub",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,  # never read: the pipe fills after ~64 KiB
        env=env,
        cwd=str(workdir),
    )
    daemon = Raw(process)
    try:
        notification = b'{"jsonrpc":"2.0","method":"session/new","params":{}}'  # a warning each
        frame = b"Content-Length: %d\r\n\r\n%s" % (len(notification), notification)
        await within(daemon.write(frame * 10_000), 60)
        request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}})
        await daemon.write(b"Content-Length: %d\r\n\r\n%s" % (len(request), request.encode()))
        answer = await within(daemon.message(), 30)
        assert answer["id"] == 1 and "sessionId" in answer["result"]
        assert process.stderr is not None
        logged = await within(process.stderr.read(1 << 16))
        assert b"ignoring the request session/new sent as a notification" in logged
    finally:
        await close(daemon)


async def test_the_dropped_lines_are_counted(env: dict[str, str], workdir: Path) -> None:
    """Once stderr is read again, a line says how many were dropped."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "elelem_daemon",
        "--provider",
        "stub",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=str(workdir),
    )
    daemon = Raw(process)
    try:
        notification = b'{"jsonrpc":"2.0","method":"session/new","params":{}}'
        frame = b"Content-Length: %d\r\n\r\n%s" % (len(notification), notification)
        await within(daemon.write(frame * 60_000), 120)  # ~5 MiB of warnings: past the queue
        request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}})
        await daemon.write(b"Content-Length: %d\r\n\r\n%s" % (len(request), request.encode()))
        await within(daemon.message(), 60)
        assert process.stderr is not None
        logged = b""
        for _ in range(200):
            logged += await within(process.stderr.read(1 << 20))
            if b"lines dropped (stderr was not read)" in logged:
                break
        else:
            raise AssertionError("no line counts the dropped lines")
    finally:
        await close(daemon)
