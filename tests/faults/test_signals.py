"""No tool outlives its face, and every face ends on a signal the same way (issue 13,
item 8): SIGTERM or SIGHUP to `elelem daemon`, `--acp`, `elelem ask` or `elelem chat`
(under a pty) while an `execute` command runs cancels the turn (its reply kept as
`[cancelled]`, answered to the editor), kills the command's processes, and exits with
128 + N. The reaper (test_orphans.py) is the net below this; here the face itself
cleans up, which the stored `[cancelled]` reply and the exit code show."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from support.async_pty import Terminal

from elelem_daemon.jsonrpc.client import Client

from .conftest import all_gone, cmdline, tree_with, within

pytestmark = pytest.mark.e2e

SIGNALS = [signal.SIGTERM, signal.SIGHUP]


def last_reply(env: dict[str, str]) -> str:
    """The last kept message of the one stored session."""
    folder = Path(env["XDG_STATE_HOME"]) / "elelem" / "sessions"
    (path,) = folder.glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    messages = [r for r in records if r["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    return messages[-1]["content"]


def execute(number: int) -> str:
    command = f"sleep {number} & sleep {number + 1}; wait"
    return f"!tool execute {json.dumps({'command': command})}"


@pytest.mark.parametrize("sig", [*SIGNALS, signal.SIGINT])
async def test_the_daemon_answers_the_turn_then_exits_128_plus_n(
    client: Client, env: dict[str, str], sig: int
) -> None:
    session = (await within(client.new_session()))["sessionId"]
    turn = await within(client.start_turn(session, execute(341)))
    pids = await tree_with(client.process.pid, "sleep 342")
    client.process.send_signal(sig)
    assert (await within(turn))["stopReason"] == "cancelled"
    assert await within(client.process.wait()) == 128 + sig
    assert await all_gone(pids) == [], [cmdline(p) for p in pids]
    assert last_reply(env) == "let me check.[cancelled]"


@pytest.mark.parametrize("sig", SIGNALS)
async def test_the_acp_face_answers_the_prompt_then_exits_128_plus_n(
    env: dict[str, str], workdir: Path, sig: int
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp", "--provider", "stub",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=workdir,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None

    def send(ident: int, method: str, params: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        process.stdin.write(json.dumps(message).encode() + b"\n")

    async def answer(ident: int) -> dict[str, Any]:
        while True:
            message = json.loads(await within(process.stdout.readline(), 30))
            if message.get("id") == ident and "method" not in message:
                return message

    try:
        send(1, "initialize", {"protocolVersion": 1})
        await answer(1)
        send(2, "session/new", {"cwd": str(workdir), "mcpServers": []})
        session = (await answer(2))["result"]["sessionId"]
        text = {"type": "text", "text": execute(351)}
        send(3, "session/prompt", {"sessionId": session, "prompt": [text]})
        pids = await tree_with(process.pid, "sleep 352", 30)
        process.send_signal(sig)
        assert (await answer(3))["result"]["stopReason"] == "cancelled"
        assert await within(process.wait()) == 128 + sig
        assert await all_gone(pids) == [], [cmdline(p) for p in pids]
        assert last_reply(env) == "let me check.[cancelled]"
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize("sig", SIGNALS)
async def test_elelem_ask_cancels_its_turn_and_exits_128_plus_n(
    env: dict[str, str], workdir: Path, sig: int
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "ask", "--provider", "stub", execute(361),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=workdir,
    )  # fmt: skip
    try:
        pids = await tree_with(process.pid, "sleep 362", 30)
        process.send_signal(sig)
        assert await within(process.wait()) == 128 + sig
        assert await all_gone(pids) == [], [cmdline(p) for p in pids]
        assert last_reply(env) == "let me check.[cancelled]"
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize("sig", SIGNALS)
async def test_elelem_chat_under_a_pty_cancels_its_turn_and_exits_128_plus_n(
    env: dict[str, str], workdir: Path, sig: int
) -> None:
    chat = await Terminal.spawn(["chat", "--provider", "stub"], env, workdir)
    try:
        await chat.prompt()
        chat.type(execute(371) + "\r")
        pids = await tree_with(chat.process.pid, "sleep 372", 30)
        chat.process.send_signal(sig)
        assert await chat.wait() == 128 + sig
        assert await all_gone(pids) == [], [cmdline(p) for p in pids]
        assert last_reply(env) == "let me check.[cancelled]"
    finally:
        await chat.close()


@pytest.mark.parametrize("sig", SIGNALS)
async def test_elelem_chat_waiting_at_its_prompt_exits_at_once(
    env: dict[str, str], workdir: Path, sig: int
) -> None:
    chat = await Terminal.spawn(["chat", "--provider", "stub"], env, workdir)
    try:
        await chat.prompt()
        chat.process.send_signal(sig)  # the terminal's read, in its thread, holds nothing up
        assert await chat.wait(10) == 128 + sig
    finally:
        await chat.close()
