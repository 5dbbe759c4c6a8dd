"""Failures look like failures (issue 40): a tool result whose exit status is outside
that tool's expected set is a failed call in the daemon's events, in the stored
history and in ACP's updates, though the model still reads what the tool gave."""

from __future__ import annotations

import json
from pathlib import Path

from elelem_daemon.jsonrpc.client import Client

from .conftest import within


def of(client: Client, method: str) -> list[dict]:
    return [n["params"] for n in client.notifications if n["method"] == method]


async def test_list_of_a_missing_path_fails_and_grep_finding_nothing_does_not(
    client: Client, session: str, workdir: Path, spawn
) -> None:
    (workdir / "a.txt").write_text("hay\n")
    calls = [
        ["list", {"path": "missing"}],
        ["grep", {"pattern": "needle"}],
        ["execute", {"command": "exit 3"}],
        ["execute", {"command": "echo fine"}],
    ]
    await within(client.turn(session, "!tools " + json.dumps(calls)))
    listed, grep, three, fine = of(client, "event/result")
    assert listed["ok"] is False and listed["result"]["exit_status"] == 2
    assert listed["result"]["ok"] is True  # what the model read: elelem's own rule
    assert grep["ok"] is True and grep["result"]["exit_status"] == 1  # nothing found
    assert three["ok"] is False and three["result"]["exit_status"] == 3
    assert fine["ok"] is True
    # the stored history says the same, for every face's redraw
    await client.close()
    again = await spawn()
    await within(again.initialize())
    loaded = await within(again.request("session/load", {"sessionId": session}))
    tools = [e for e in loaded["history"] if e.get("type") == "tool"]
    assert [t["ok"] for t in tools] == [False, True, False, True]
