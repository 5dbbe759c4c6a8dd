"""ACP's `session/load` of a large session: read off the loop, replayed a page at a time,
and two loads of it at once both answered, their replays one after the other."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from support.ndjson import Wire

pytestmark = pytest.mark.e2e
PAD = "p" * 100_000  # each turn ~200 KB: the replay spans pages


async def daemon(env: dict[str, str], cwd: Path) -> Wire:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=cwd,
        limit=16 * 1024 * 1024,
    )  # fmt: skip
    return Wire(process)


async def test_two_loads_at_once_of_a_large_session_are_both_answered(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env.update(HOME=str(tmp_path), ELELEM_PROVIDER="stub")
    first = await daemon(env, tmp_path)
    try:
        answer = await first.call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        sid = answer["result"]["sessionId"]
        for ident in range(2, 6):
            prompt = [{"type": "text", "text": f"!echo turn {ident} {PAD}"}]
            assert "result" in await first.call(
                ident, "session/prompt", {"sessionId": sid, "prompt": prompt}
            )
    finally:
        first.process.kill()
        await first.process.wait()
    again = await daemon(env, tmp_path)
    try:
        load = {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}
        await again.send(id=1, method="session/load", params=load)
        await again.send(id=2, method="session/load", params=load)
        answers = {}
        while len(answers) < 2:
            message = await again.read()
            if message.get("id") in (1, 2) and "method" not in message:
                answers[message["id"]] = message
        assert all("result" in a for a in answers.values()), answers
        users = [
            m["params"]["update"]["content"]["text"][:13]
            for m in again.seen
            if m.get("params", {}).get("update", {}).get("sessionUpdate") == "user_message_chunk"
        ]
        # each load replays the whole transcript, one replay after the other
        turns = [f"!echo turn {n} " for n in range(2, 6)]
        assert [u.lstrip() for u in users] == turns + turns
    finally:
        again.process.kill()
        await again.process.wait()
