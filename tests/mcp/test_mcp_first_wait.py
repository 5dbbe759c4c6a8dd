"""The one rule for MCP servers still starting (issue 38): a session's first turn waits
once for the servers whose process is alive, until each is ready or has failed, at
most ELELEM_MCP_FIRST_WAIT (30 s by default); later turns never wait, so a server that
never answers costs one wait per session. Every face: the rule is McpManager's."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_support import SERVERS

sys.path.insert(0, str(Path(__file__).parents[1]))
from support import ndjson  # noqa: E402
from support.ndjson import Wire  # noqa: E402

pytestmark = pytest.mark.e2e
ADD = '!tool demo__add {"a": 40, "b": 2}'
WAITING = "waiting for MCP servers to start"


@pytest.fixture(autouse=True)
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound on each read, not a timing: the first prompt is silent while it waits."""
    monkeypatch.setattr(ndjson, "TIMEOUT", 180)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    config = home / ".config" / "elelem"
    config.mkdir(parents=True)
    (config / "permissions").write_text("demo__* allow\nlate__* allow\n")
    values = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    return {
        **values,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "ELELEM_PROVIDER": "stub",
        "ELELEM_MCP_TIMEOUT": "120",  # the server's own start bound: not what is tested
    }


def slow(name: str, seconds: float) -> dict[str, Any]:
    script = str(SERVERS / "slow.py")
    return {"name": name, "command": sys.executable, "args": [script, str(seconds)], "env": []}


async def prompt_text(wire: Wire, ident: int, sid: str, text: str) -> tuple[dict[str, Any], str]:
    """The prompt's answer, and the text of the message chunks it sent."""
    mark = len(wire.seen)
    params = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
    answer = await asyncio.wait_for(wire.call(ident, "session/prompt", params), 180)
    updates = [m["params"]["update"] for m in wire.seen[mark:] if "params" in m]
    said = "".join(
        u["content"]["text"] for u in updates if u.get("sessionUpdate") == "agent_message_chunk"
    )
    return answer, said


async def acp(env: dict[str, str], cwd: Path) -> tuple[asyncio.subprocess.Process, Wire]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=cwd,
    )  # fmt: skip
    wire = Wire(process)
    await wire.call(0, "initialize", {"protocolVersion": 1})
    return process, wire


async def test_a_first_prompt_with_a_server_that_takes_12_s_to_start_has_its_tools(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The issue's case: `acpx exec` with a server `npx` fetches first: the first prompt
    says it waits, once, and calls the tool. The default bound is 30 s
    (`test_the_default_first_wait_is_long_enough_to_fetch_a_package`); the test gives
    60, as test_mcp_first_turn.py does: a shared machine starts Python slowly."""
    process, wire = await acp({**env, "ELELEM_MCP_FIRST_WAIT": "60"}, tmp_path)
    try:
        new = {"cwd": str(tmp_path), "mcpServers": [slow("demo", 12)]}
        sid = (await wire.call(1, "session/new", new))["result"]["sessionId"]
        answer, said = await prompt_text(wire, 2, sid, ADD)
        assert answer["result"]["stopReason"] == "end_turn"
        assert said.count(WAITING) == 1 and "going on without" not in said, said
        calls = [
            m["params"]["update"]
            for m in wire.seen
            if m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == "tool_call_update"
        ]
        assert calls[-1]["status"] == "completed" and "42" in json.dumps(calls[-1]), calls
    finally:
        process.kill()
        await process.wait()


async def test_a_server_that_never_answers_costs_one_wait_per_session(
    env: dict[str, str], tmp_path: Path
) -> None:
    process, wire = await acp({**env, "ELELEM_MCP_FIRST_WAIT": "1"}, tmp_path)
    try:
        new = {"cwd": str(tmp_path), "mcpServers": [slow("late", 600)]}
        sid = (await wire.call(1, "session/new", new))["result"]["sessionId"]
        _, first = await prompt_text(wire, 2, sid, "hello")
        assert WAITING in first and "going on without these MCP servers' tools: late" in first
        _, second = await prompt_text(wire, 3, sid, "hello again")
        assert WAITING not in second and "going on without" not in second, second
    finally:
        process.kill()
        await process.wait()


async def test_the_first_wait_is_cancellable(env: dict[str, str], tmp_path: Path) -> None:
    """`session/cancel` during the wait ends the prompt `cancelled`; the next one does
    not wait again."""
    process, wire = await acp(env, tmp_path)
    try:
        new = {"cwd": str(tmp_path), "mcpServers": [slow("late", 600)]}
        sid = (await wire.call(1, "session/new", new))["result"]["sessionId"]
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]}
        await wire.send(id=2, method="session/prompt", params=params)
        while WAITING not in json.dumps((await wire.read()).get("params", {})):
            pass
        await wire.send(method="session/cancel", params={"sessionId": sid})
        answer = await asyncio.wait_for(wire.answer(2), 60)
        assert answer["result"]["stopReason"] == "cancelled"
        _, second = await prompt_text(wire, 3, sid, "hello again")
        assert WAITING not in second
    finally:
        process.kill()
        await process.wait()


def test_the_default_first_wait_is_long_enough_to_fetch_a_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from elelem_daemon.mcp.manager import FIRST_WAIT
    from elelem_daemon.mcp.server import setting

    monkeypatch.delenv("ELELEM_MCP_FIRST_WAIT", raising=False)
    assert setting("ELELEM_MCP_FIRST_WAIT", FIRST_WAIT) == FIRST_WAIT >= 30
