"""protocol.md's "A whole exchange, raw bytes" is a real run of the daemon, kept byte for byte.

The test runs the exchange against the real daemon on bare pipes and renders what
crossed them in the document's notation; the document must hold exactly that, header
lengths included. Only two things are put back to the document's values: the random
session id and the temporary working directory (lengths are counted after that).

When the daemon's answers change on purpose, write the new exchange into protocol.md:

    ELELEM_WRITE_EXAMPLE=1 .venv/bin/pytest tests/e2e/test_example_bytes.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.raw import RawDaemon, clean_env

pytestmark = pytest.mark.e2e

PROTOCOL = Path(__file__).resolve().parents[2] / "protocol.md"
HEADING = "## A whole exchange, raw bytes"
SESSION = "406e253f7f1d42f4a1f20c1ccded2850"  # the document's session id
CWD = "/home/me/project"  # the document's working directory
TURN = '!tool execute {"command":"echo hi"}'


async def run_exchange(tmp_path: Path) -> tuple[list[tuple[str, bytes]], int]:
    """The example, run: every body in order, with its direction; and the exit code."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    daemon = await RawDaemon.spawn("-p", "stub", env=clean_env(home), cwd=project)
    seen: list[tuple[str, bytes]] = []
    ids: dict[str, str] = {}

    async def send(message: dict[str, Any]) -> None:
        seen.append(("-->", await daemon.send(message)))

    async def until(ident: Any) -> dict[str, Any]:
        while True:
            body = await daemon.body()
            seen.append(("<--", body))
            message = json.loads(body)
            if message.get("method") == "input/ask":  # the user allows the call
                await send({"jsonrpc": "2.0", "id": message["id"], "result": {"text": "allow"}})
            elif message.get("id") == ident:
                return message

    try:
        await send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "clientInfo": {"name": "example"},
                    "capabilities": {"input": {"ask": True}},
                },
            }
        )
        await until(1)
        await send(
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(project)}}
        )
        ids["session"] = (await until(2))["result"]["sessionId"]
        await send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/turn",
                "params": {"sessionId": ids["session"], "text": TURN},
            }
        )
        await until(3)
        await send({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
        await until(4)
        await send({"jsonrpc": "2.0", "method": "exit"})
        code = await daemon.close()
    finally:
        await daemon.close()
    real = {
        ids.get("session", SESSION).encode(): SESSION.encode(),
        str(project).encode(): CWD.encode(),
    }
    shown = []
    for direction, body in seen:
        for value, placeholder in real.items():
            body = body.replace(value, placeholder)
        shown.append((direction, body))
    return shown, code


def render(exchange: list[tuple[str, bytes]]) -> str:
    lines = ["```"]
    for direction, body in exchange:
        lines += [direction, f"Content-Length: {len(body)}\\r\\n\\r\\n", body.decode("ascii")]
    return "\n".join([*lines, "```"])


def documented(text: str) -> tuple[int, int]:
    """Where the example's block is in protocol.md: (start, end) of the fenced block."""
    section = text.index(HEADING)
    start = text.index("```\n-->", section)
    end = text.index("\n```\n", start + 4) + len("\n```")
    return start, end


async def test_the_documented_exchange_is_what_the_daemon_sends(tmp_path: Path) -> None:
    exchange, code = await run_exchange(tmp_path)
    assert code == 0  # "The daemon then exits with code 0."
    block = render(exchange)
    text = PROTOCOL.read_text(encoding="utf-8")
    start, end = documented(text)
    if os.environ.get("ELELEM_WRITE_EXAMPLE") == "1":
        PROTOCOL.write_text(text[:start] + block + text[end:], encoding="utf-8")
        text = PROTOCOL.read_text(encoding="utf-8")
        start, end = documented(text)
    assert text[start:end] == block, (
        "protocol.md's raw exchange is stale: run "
        "ELELEM_WRITE_EXAMPLE=1 .venv/bin/pytest tests/e2e/test_example_bytes.py"
    )


async def test_the_example_shows_what_clients_must_handle(tmp_path: Path) -> None:
    """What the text around the block promises is in the bytes."""
    exchange, _ = await run_exchange(tmp_path)
    daemon_says = [json.loads(body) for direction, body in exchange if direction == "<--"]
    ask = next(m for m in daemon_says if m.get("method") == "input/ask")
    assert ask["params"]["kind"] == "permission"
    assert ask["params"]["options"] == ["allow", "deny", "always", "never"]
    assert ask["params"]["tool"] == {"name": "execute", "arguments": {"command": "echo hi"}}
    init = daemon_says[0]["result"]
    assert set(init["capabilities"]) == {
        "providers",
        "cancel",
        "inputAsk",
        "maxFrameBytes",
        "attachments",
        "editorState",
        "mcpServers",
        "files",
    }
    assert "plugins" in daemon_says[1]["result"]
