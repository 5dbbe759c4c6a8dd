"""`/compact` never runs or shows a tool call (issues 37, 38), in the daemon face and the
ACP face: the fake llama.cpp (tests/support/small_window.py) answers the summary with a
`read` call of secret.txt besides its text; the request carried the tools with tool
choice `none`, and no face draws or runs the call (codecompanion drew `Read: read`)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.ndjson import Wire
from support.small_window import SmallWindow

from elelem_daemon.jsonrpc.client import Client

from .conftest import within

pytestmark = pytest.mark.e2e


@pytest.fixture
def small() -> Iterator[SmallWindow]:
    with SmallWindow(2048, call_on_summary=True) as server:
        yield server


@pytest.fixture
def local(env: dict[str, str], small: SmallWindow, workdir: Path) -> dict[str, str]:
    (workdir / "secret.txt").write_text("not for a summary\n")
    values = {k: v for k, v in env.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    return {**values, "OPENAI_BASE_URL": f"{small.url}/v1", "OPENAI_MODEL": "local"}


def summary_requests(small: SmallWindow) -> list[dict]:
    return [b for b in small.bodies if b.get("tool_choice") == "none"]


async def test_compact_in_the_daemon_face_shows_no_call(local, small, workdir) -> None:
    async with await Client.spawn("daemon", "-p", "openai", env=local, cwd=str(workdir)) as client:
        await within(client.initialize())
        session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
        await within(client.turn(session, "tell me about the parser"), 60)
        seen = len(client.notifications)
        done = await within(client.command(session, "/compact"), 60)
        assert done["output"] == "  → compacted: 2 messages became 1", done
        after = [n["method"] for n in client.notifications[seen:]]
    assert "event/saying" in after  # the summary is shown as it streams
    assert not [m for m in after if m in ("event/doing", "event/result")], after
    (asked,) = summary_requests(small)
    assert asked["tools"] and small.bodies[-1] is asked  # nothing ran after it


async def test_compact_over_acp_sends_no_tool_call_update(local, small, workdir) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp", "-p", "openai",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=local,
        cwd=str(workdir), limit=16 * 1024 * 1024,
    )  # fmt: skip
    wire = Wire(process)
    try:
        await wire.call(0, "initialize", {"protocolVersion": 1})
        answer = await wire.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []})
        session = answer["result"]["sessionId"]
        params = {"sessionId": session, "prompt": [{"type": "text", "text": "tell me more"}]}
        await within(wire.call(2, "session/prompt", params), 60)
        start = len(wire.seen)
        params = {"sessionId": session, "prompt": [{"type": "text", "text": "/compact"}]}
        done = await within(wire.call(3, "session/prompt", params), 60)
        assert done["result"]["stopReason"] == "end_turn", done
        updates = [
            m["params"]["update"] for m in wire.seen[start:] if m.get("method") == "session/update"
        ]
    finally:
        process.kill()
        await process.wait()
    kinds = {u.get("sessionUpdate") for u in updates}
    assert not kinds & {"tool_call", "tool_call_update"}, json.dumps(updates)[:2000]
    text = "".join(
        u["content"]["text"] for u in updates if u.get("sessionUpdate") == "agent_message_chunk"
    )
    assert "compacted: 2 messages became 1" in text
    assert len(summary_requests(small)) == 1 and small.bodies[-1]["tool_choice"] == "none"
