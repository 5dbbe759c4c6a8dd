"""The degraded cases of issue 29, through the real daemon: secrets whose names missed
the old patterns, a hard link mentioned or attached, control characters in what an
editor sends, an MCP tool list too big to send, MCP secrets in status and logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import within

pytestmark = pytest.mark.e2e

SERVICE_KEY = "svc-canary-Qm71xT"
DB_PASSWORD = "pw-canary-Lk29vB"


async def test_wider_secret_names_and_password_urls_do_not_reach_a_command(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    planted = {
        **env,
        "MY_SERVICE_KEY": SERVICE_KEY,
        "DATABASE_URL": f"postgres://app:{DB_PASSWORD}@db.example.com:5432/app",
        "PLAIN_URL": "postgres://app@db.example.com/app",
    }
    client = await spawn(env=planted)
    await within(client.initialize())
    sid = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
    events: list[Any] = []
    command = "env; tr '\\0' '\\n' < /proc/$PPID/environ"
    await within(
        client.turn(
            sid, f"!tool execute {json.dumps({'command': command})}", on_event=events.append
        )
    )
    results = [e["params"]["result"] for e in events if e["method"] == "event/result"]
    shown = results[0]["content"]
    assert "PLAIN_URL=postgres://app@db.example.com/app" in shown  # the command did run
    assert SERVICE_KEY not in shown and "MY_SERVICE_KEY" not in shown
    assert DB_PASSWORD not in shown and "DATABASE_URL" not in shown
