"""A large stored session over the wire (protocol.md: `session/load`): it loads whole,
and while it is read the daemon goes on answering the other sessions' requests."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from elelem_daemon.store import records

from .conftest import within

pytestmark = pytest.mark.e2e

MESSAGES, SIZE = 2_000, 6_000  # 12 MB on disk; session/load's answer carries a page of it


def write_big(folder: Path, session_id: str, cwd: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    head = {
        "type": "session",
        "version": records.VERSION,
        "id": session_id,
        "cwd": str(cwd),
        "provider": "stub",
        "model": None,
        "created": "2026-12-01T00:00:00.000Z",
        "title": "big",
    }
    with (folder / f"{session_id}.jsonl").open("wb") as out:
        out.write(records.encode(head))
        for n in range(MESSAGES):
            role = "user" if n % 2 == 0 else "assistant"
            content = f"{n} " + "x" * SIZE
            out.write(records.encode({"type": "message", "role": role, "content": content}))


async def test_a_big_load_does_not_hold_up_another_sessions_requests(spawn, env, workdir):
    write_big(Path(env["XDG_STATE_HOME"]) / "elelem" / "sessions", "big", workdir)
    client = await spawn()
    await within(client.initialize())
    other = (await within(client.new_session()))["sessionId"]
    await within(client.turn(other, "!echo hi"))

    loading = asyncio.create_task(client.request("session/load", {"sessionId": "big"}))
    await asyncio.sleep(0)  # the load is sent first
    context = asyncio.create_task(client.context(other))
    done, _ = await within(asyncio.wait({loading, context}, return_when="FIRST_COMPLETED"), 60)
    assert done == {context}, "the other session's request waited for the load"
    assert [m["content"] for m in context.result()[1:]] == ["!echo hi", "hi"]

    loaded = await within(loading, 60)
    assert (loaded["sessionId"], loaded["title"], loaded["busy"]) == ("big", "big", False)
    assert loaded["historyCursor"] is not None and not loaded["messagesComplete"]
    assert 0 < len(loaded["messages"]) < MESSAGES  # the newest, within a page's bound
    assert loaded["messages"][-1] == {
        "role": "assistant",
        "content": f"{MESSAGES - 1} " + "x" * SIZE,
    }
    history = await within(client.whole_history(loaded), 60)  # the pages before it
    assert len(history) == MESSAGES
    assert history[0] == {"type": "message", "role": "user", "content": "0 " + "x" * SIZE}
    assert [int(e["content"].split()[0]) for e in history] == list(range(MESSAGES))


async def test_two_loads_of_one_session_at_once_open_it_once(spawn, env, workdir):
    write_big(Path(env["XDG_STATE_HOME"]) / "elelem" / "sessions", "big", workdir)
    client = await spawn()
    await within(client.initialize())
    first, second = await within(
        asyncio.gather(
            client.request("session/load", {"sessionId": "big"}),
            client.request("session/load", {"sessionId": "big"}),
        ),
        60,
    )
    assert first["sessionId"] == second["sessionId"] == "big"
    assert first["history"] == second["history"] and first["historyCursor"]
    opened = [s for s in await within(client.list_sessions()) if not s.get("stored")]
    assert [s["sessionId"] for s in opened] == ["big"]
