"""MCP tools are there when the first prompt needs them, in every face, within a bound
(issue 33): the first turn waits for servers still starting (ELELEM_MCP_FIRST_WAIT),
says so, and goes on without those that are not ready, naming them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_support import DEMO, stdio

sys.path.insert(0, str(Path(__file__).parents[1]))
from support.ndjson import Wire  # noqa: E402

pytestmark = pytest.mark.e2e
ADD = '!tool demo__add {"a": 40, "b": 2}'


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    config = home / ".config" / "elelem"
    config.mkdir(parents=True)
    (config / "permissions").write_text("demo__* allow\ngone__* allow\n")
    values = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    return {
        **values,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "ELELEM_PROVIDER": "stub",
        "ELELEM_MCP_FIRST_WAIT": "60",  # a bound: a shared machine starts Python slowly
    }


def test_elelem_ask_names_a_server_whose_command_does_not_exist_and_answers(
    env: dict[str, str], tmp_path: Path
) -> None:
    """It waited 16 s with nothing on screen, the retries of a missing command: now it
    says what it waits for, and goes on once the first start failed."""
    config = Path(env["XDG_CONFIG_HOME"]) / "elelem" / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"gone": {"command": "no-such-mcp-server"}}}))
    done = subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "ask", "!echo hi"],
        env={**env, "ELELEM_MCP_TIMEOUT": "60"}, cwd=tmp_path, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120,  # a bound, not a timing
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    assert "waiting for MCP servers to start: gone" in done.stderr
    assert "going on without these MCP servers' tools: gone (retrying: " in done.stderr


def test_elelem_ask_calls_a_tool_of_a_server_that_is_still_starting(
    env: dict[str, str], tmp_path: Path
) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "elelem" / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"demo": stdio()}}))
    done = subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "ask", ADD], env=env, cwd=tmp_path,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "waiting for MCP servers to start: demo" in done.stderr
    assert "+ demo__add(a=40, b=2)\n  42\n  ✓" in done.stderr


async def test_a_one_shot_acp_clients_first_prompt_calls_its_servers_tool(
    env: dict[str, str], tmp_path: Path
) -> None:
    """`acpx exec`: session/new with an MCP server, then at once the one prompt."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=tmp_path,
    )  # fmt: skip
    wire = Wire(process)
    try:
        await wire.call(0, "initialize", {"protocolVersion": 1})
        server = {"name": "demo", "command": sys.executable, "args": [str(DEMO)], "env": []}
        new = {"cwd": str(tmp_path), "mcpServers": [server]}
        sid = (await wire.call(1, "session/new", new))["result"]["sessionId"]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": ADD}]}
        mark = len(wire.seen)
        answer = await asyncio.wait_for(wire.call(2, "session/prompt", prompt), 120)
        assert answer["result"]["stopReason"] == "end_turn"
        updates = [m["params"]["update"] for m in wire.seen[mark:] if "params" in m]
        said = "".join(
            u["content"]["text"] for u in updates if u.get("sessionUpdate") == "agent_message_chunk"
        )
        assert "waiting for MCP servers to start: demo" in said
        done = [u for u in updates if u.get("sessionUpdate") == "tool_call_update"]
        assert done and done[-1]["status"] == "completed", updates
        assert "42" in json.dumps(done[-1])
    finally:
        process.kill()
        await process.wait()
