"""A session's history over the wire a page at a time (protocol.md: `session/load`,
`session/history`): the whole transcript, compactions included, and a daemon that goes
on answering while a large session loads."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from .conftest import within
from .test_stored_big import write_big

pytestmark = pytest.mark.e2e

PAD = "p" * 60_000  # each prompt (and its echoed reply) 60 KB: the history spans pages


def prompt(n: int) -> str:
    return f"!echo turn {n} {PAD}"


async def test_a_history_across_two_compactions_comes_whole_through_the_pages(spawn):
    client = await spawn()
    await within(client.initialize())
    sid = (await within(client.new_session()))["sessionId"]
    for n in range(1, 13):
        await within(client.turn(sid, prompt(n)))
        if n in (4, 8):  # two compactions: the model's history restarts from a summary
            said = (await within(client.command(sid, "/compact")))["output"]
            assert "compacted" in said
    await within(client.close_session(sid))

    again = await spawn()  # another daemon: the session comes from its file
    await within(again.initialize())
    loaded = await within(again.load_session(sid))
    assert loaded["historyCursor"] is not None  # more than one page
    history = await within(again.whole_history(loaded))
    prompts = [
        e["content"]
        for e in history
        if e["type"] == "message" and e["role"] == "user" and e["content"].startswith("!echo")
    ]
    assert prompts == [prompt(n) for n in range(1, 13)]  # every turn's prompt, in order
    kinds = [e["type"] if e["type"] != "message" else e["role"] for e in history]
    marks = [i for i, kind in enumerate(kinds) if kind == "compacted"]
    assert len(marks) == 2
    for mark in marks:  # each marker is followed by the compaction's summary
        assert history[mark + 1]["content"].startswith("Context: ")
    before_first = [e["content"] for e in history[: marks[0]] if e["type"] == "message"]
    assert before_first[0] == prompt(1) and before_first[-1] == f"turn 4 {PAD}"
    # what the model reads again starts at the second summary
    context = await within(again.context(sid))
    assert context[1]["content"].startswith("Context: ")
    assert [m["content"] for m in context[2:] if m["role"] == "user"] == [
        prompt(n) for n in range(9, 13)
    ]


async def test_a_stale_or_forged_cursor_is_refused(spawn):
    client = await spawn()
    await within(client.initialize())
    sid = (await within(client.new_session()))["sessionId"]
    for n in range(1, 7):
        await within(client.turn(sid, prompt(n)))
    await within(client.close_session(sid))
    loaded = await within(client.load_session(sid))
    cursor = loaded["historyCursor"]
    assert cursor is not None
    for forged in ["", "x", "0.99999999", "-1.-1", "9" * 100, "٣.٣"]:
        with pytest.raises(Exception) as caught:
            await within(client.request("session/history", {"sessionId": sid, "cursor": forged}))
        assert getattr(caught.value, "code", None) == -32602, forged
    await within(client.command(sid, "/clear"))  # the history changed: the cursor is stale
    with pytest.raises(Exception) as caught:
        await within(client.request("session/history", {"sessionId": sid, "cursor": cursor}))
    assert "changed" in str(caught.value)


async def test_session_list_is_answered_while_a_large_session_loads(spawn, env, workdir):
    write_big(Path(env["XDG_STATE_HOME"]) / "elelem" / "sessions", "big", workdir)
    client = await spawn()
    await within(client.initialize())
    await within(client.list_sessions())  # warm
    loading = asyncio.create_task(client.request("session/load", {"sessionId": "big"}))
    waits: list[float] = []
    while not loading.done():
        began = time.monotonic()
        await within(client.list_sessions(), 60)
        waits.append(time.monotonic() - began)
        await asyncio.sleep(0.1)
    loaded = await within(loading, 60)
    assert loaded["sessionId"] == "big"
    assert waits and max(waits) < 1.0, waits  # generous: the load never holds the daemon
