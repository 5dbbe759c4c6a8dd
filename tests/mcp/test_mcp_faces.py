"""The servers of the user's mcp.json through the real faces, as spawned processes:
the daemon (`/mcp` over `session/command`, a turn calling an MCP tool) and ACP (a
prompt calling an MCP tool). When the face exits, its servers are gone. (Servers that
the faces themselves pass, `mcpServers`, are the next stage's: docs/mcp.md.)"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_support import project, quick_retries, stdio, until  # noqa: F401 (fixtures)

from elelem_daemon.jsonrpc.client import Client
from elelem_daemon.processes.procs import descendants


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    config = home / ".config" / "elelem"
    config.mkdir(parents=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": stdio()}}))
    (config / "permissions").write_text("demo__* allow\n")
    values = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    return {
        **values,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "ELELEM_MCP_TIMEOUT": "60",
    }


def server_pids(face: int) -> set[int]:
    found = set()
    for pid in descendants(face):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"demo.py" in f.read():
                    found.add(pid)
        except OSError:
            continue
    return found


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


async def test_the_daemon_face(env: dict[str, str], project: Path) -> None:
    client = await Client.spawn("--provider", "stub", env=env, cwd=str(project))
    try:
        await asyncio.wait_for(client.initialize(), 30)
        session = (await client.new_session(cwd=str(project)))["sessionId"]

        async def ready() -> bool:
            return "ready" in (await client.command(session, "/mcp"))["output"]

        await until(ready, 120, 0.1)
        events: list[dict[str, Any]] = []
        await client.turn(session, '!tool demo__add {"a": 20, "b": 22}', events.append)
        results = [e["params"] for e in events if e["method"] == "event/result"]
        assert results and results[0]["result"]["ok"] is True
        assert "42" in json.dumps(results[0]["result"])
        servers = server_pids(client.process.pid)
        assert servers
    finally:
        await client.close()
    await until(lambda: not any(running(pid) for pid in servers), 30)


async def test_the_acp_face(env: dict[str, str], project: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "elelem_daemon",
        "--acp",
        "--provider",
        "stub",
        env=env,
        cwd=str(project),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    updates: list[dict[str, Any]] = []
    ids = iter(range(1, 1000))

    async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        ident = next(ids)
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        process.stdin.write(json.dumps(message).encode() + b"\n")
        await process.stdin.drain()
        while True:
            answer = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
            if answer.get("method") == "session/update":
                updates.append(answer["params"]["update"])
            elif answer.get("id") == ident and "method" not in answer:
                return answer

    try:
        await ask("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        new = await ask("session/new", {"cwd": str(project), "mcpServers": []})
        session = new["result"]["sessionId"]

        async def ready() -> bool:
            updates.clear()
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "/mcp"}]}
            await ask("session/prompt", prompt)
            return any("ready" in json.dumps(u) for u in updates)

        await until(ready, 120, 0.2)
        updates.clear()
        text = '!tool demo__add {"a": 1, "b": 2}'
        await ask(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
        )
        done = [u for u in updates if u.get("sessionUpdate") == "tool_call_update"]
        assert done and done[-1]["status"] == "completed"
        servers = server_pids(process.pid)
        assert servers
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 30)
        except TimeoutError:
            process.kill()
            await process.wait()
    await until(lambda: not any(running(pid) for pid in servers), 30)
