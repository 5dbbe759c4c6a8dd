"""The window is managed, not hit, in every face: 40 turns against a fake llama.cpp
with a 2,048-token window (tests/support/small_window.py) through the real daemon on
stdio, the ACP face on NDJSON and `elelem chat -` piped. Every turn ends with no error
reply, the compactions are announced, and `/compact` succeeds on a history that
already overflows."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.ndjson import Wire
from support.small_window import SmallWindow

from elelem_daemon.jsonrpc.client import Client

from .conftest import within

pytestmark = pytest.mark.e2e
TURNS = 40


@pytest.fixture
def small() -> Iterator[SmallWindow]:
    with SmallWindow(2048) as server:
        yield server


@pytest.fixture
def local(env: dict[str, str], small: SmallWindow, workdir: Path) -> dict[str, str]:
    (workdir / "big.txt").write_text("0123456789abcdef\n" * 4000)
    values = {k: v for k, v in env.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    return {**values, "OPENAI_BASE_URL": f"{small.url}/v1", "OPENAI_MODEL": "local"}


def prompt(i: int) -> str:
    return f"question {i}: read big.txt" if i % 7 == 3 else f"question {i}: tell me about item {i}"


async def test_forty_turns_through_the_daemon(local, small, workdir) -> None:
    async with await Client.spawn("daemon", "-p", "openai", env=local, cwd=str(workdir)) as client:
        await within(client.initialize())
        session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
        says: list[dict[str, Any]] = []

        def heard(event: dict[str, Any]) -> None:
            if event["method"] == "event/say":
                says.append(event["params"])

        for i in range(TURNS):
            result = await within(client.turn(session, prompt(i), on_event=heard), 60)
            assert (i, result["stopReason"]) == (i, "end_turn"), result["reply"]
            assert not result["reply"].startswith("Error")
        context = await within(client.context(session))
    assert [s for s in says if s["kind"] == "error"] == []
    announced = [s["text"] for s in says if s["text"].startswith("context compacted")]
    assert len(announced) >= 3 and {s["kind"] for s in says} == {"info"}
    assert not any("Error" in json.dumps(m) for m in context)
    assert any(status == 400 for _, status, _ in small.requests) or len(announced) >= 5


async def test_compact_in_the_daemon_on_a_history_that_overflows(local, small, workdir) -> None:
    local = {**local, "ELELEM_COMPACT_AT": "0", "ELELEM_COMPACT_RETRY": "0"}
    async with await Client.spawn("daemon", "-p", "openai", env=local, cwd=str(workdir)) as client:
        await within(client.initialize())
        session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
        for i in range(TURNS):  # nothing compacts ahead: the window is hit (a reply may
            # be cut on the way: `max_tokens`, as llama.cpp cuts it)
            result = await within(client.turn(session, f"question {i}: tell me about it"), 60)
            if result["stopReason"] == "error":
                break
        assert "exceeds the available context size" in result["reply"]
        assert "/compact" in result["reply"]
        context = await within(client.context(session))
        assert not any("Error" in json.dumps(m) for m in context)  # the refused one: not kept
        done = await within(client.command(session, "/compact"), 60)
        assert "compacted:" in done["output"] and "error" not in done["output"], done
        again = await within(client.turn(session, f"question {i}: tell me about it"), 60)
        assert again["stopReason"] == "end_turn"


async def test_forty_turns_through_the_acp_face(local, small, workdir) -> None:
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
        chunks: list[str] = []
        for i in range(TURNS):
            start = len(wire.seen)
            params = {"sessionId": session, "prompt": [{"type": "text", "text": prompt(i)}]}
            done = await within(wire.call(10 + i, "session/prompt", params), 60)
            assert (i, done["result"]["stopReason"]) == (i, "end_turn"), done
            for message in wire.seen[start:]:
                update = message.get("params", {}).get("update", {})
                if update.get("sessionUpdate") == "agent_message_chunk":
                    chunks.append(update["content"]["text"])
    finally:
        process.kill()
        await process.wait()
    text = "".join(chunks)
    assert text.count("context compacted") >= 3
    assert "error:" not in text and "exceeds" not in text


async def test_forty_turns_through_the_terminal(local, small, workdir) -> None:
    lines = "".join(f"{prompt(i)}\n" for i in range(TURNS)) + "/context\n"
    chat = await asyncio.create_subprocess_exec(
        os.path.join(os.path.dirname(sys.executable), "elelem"), "chat", "-", "-p", "openai",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=local, cwd=str(workdir),
    )  # fmt: skip
    out, err = await within(chat.communicate(lines.encode()), 300)
    shown = out.decode() + err.decode()
    assert chat.returncode == 0, shown
    assert shown.count("context compacted") >= 3
    assert "Error" not in shown and "exceeds" not in shown
    replies = sum(1 for _, status, text in small.requests if status == 200 and "question" in text)
    assert replies >= TURNS
