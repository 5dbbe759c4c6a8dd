"""One ACP exchange with an agent command, as the ACP Registry's own check makes it:
spawn, `initialize` (declaring terminal auth or not), optionally `session/new`, stop.
Newline-delimited JSON-RPC over the command's stdio."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


def acp_initialize(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    terminal_auth: bool,
    new_session: bool = False,
    timeout: float = 120,
) -> dict[str, Any]:
    """The `initialize` result; with new_session, also `result["session"]`: the
    `session/new` result, or `{"error": ...}` when it was refused."""
    capabilities: dict[str, Any] = {"fs": {"readTextFile": False, "writeTextFile": False}}
    if terminal_auth:
        capabilities["auth"] = {"terminal": True}
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": capabilities},
        }
    ]
    if new_session:
        messages.append(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(cwd), "mcpServers": []},
            }
        )
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    answers: dict[int, Any] = {}
    try:
        for message in messages:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            while message["id"] not in answers:
                line = process.stdout.readline()
                assert line, f"{command} ended: {process.stderr.read() if process.stderr else ''}"
                frame = json.loads(line)
                if "id" in frame and "method" not in frame:
                    answers[frame["id"]] = frame
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    result = dict(answers[1]["result"])
    if new_session:
        second = answers[2]
        result["session"] = second.get("result") or {"error": second.get("error")}
    return result
