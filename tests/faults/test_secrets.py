"""Secrets: a canary API key planted in the daemon's environment never shows up on its
stdout or stderr, in events, errors or the kept context, and tool processes do not
inherit it unless ELELEM_TOOL_ENV_KEEP_KEYS=1 says so. The daemon moved it out of its
own environment into `elelem_daemon.base.keys` (test_keys.py has the hostile cases).
(Provider traffic with the same canary: test_providers.py.) Nor is it in the stored
sessions' files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import Tap, plugin, stored, within

pytestmark = pytest.mark.e2e

CANARY = "sk-canary-secrets-Zr81LpQe"
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GROQ_API_KEY")
LEAKY = """
import os

from elelem_daemon.base import keys


def register(plugin):
    @plugin.tool("peek", "reports the keys it can see", {})
    def peek(session, args):
        return {
            "environ": sorted(k for k in os.environ if k.endswith("_API_KEY")),
            "store": sorted(k for k in keys.environ() if k.endswith("_API_KEY") and keys.get(k)),
        }
"""
PROBES = [
    '!tool execute {"command": "env"}',
    '!tool execute {"command": "echo $OPENAI_API_KEY $ANTHROPIC_API_KEY >&2"}',
    '!tool execute {"command": "bash -c \\"sh -c env\\""}',
    "!tool peek {}",
    "!fail the provider broke",
    "!echo plain",
]


async def spawn_with_canary(spawn: Any, env: dict[str, str], **more: str) -> tuple[Client, Tap]:
    planted = {**env, **{key: CANARY for key in KEYS}, "ELELEM_LOG_LEVEL": "debug", **more}
    client = await spawn(env=planted, stderr=asyncio.subprocess.PIPE)
    tap = Tap()
    tap.attach(client)
    await within(client.initialize())
    return client, tap


async def everything(client: Client, workdir: Path) -> tuple[list[Any], list[Any], str]:
    """Run every probe in one session; return its events, results and context."""
    plugin(workdir, "leaky", LEAKY)
    session = (await within(client.new_session(cwd=str(workdir), trusted=True)))["sessionId"]
    events: list[Any] = []
    replies = [await within(client.turn(session, p, on_event=events.append)) for p in PROBES]
    errors = []
    for method, params in [
        ("session/turn", {"sessionId": session, "text": ["not", "text"]}),
        ("session/new", {"provider": "nope"}),
        ("session/command", {"sessionId": session, "line": "/context json"}),
    ]:
        try:
            replies.append(await within(client.request(method, params)))
        except RpcError as exc:
            errors.append([exc.code, exc.message, exc.data])
    context = json.dumps(await within(client.context(session)))
    return events, replies + errors, context


async def test_a_canary_key_is_nowhere(spawn: Any, env: dict[str, str], workdir: Path) -> None:
    client, tap = await spawn_with_canary(spawn, env)
    events, answers, context = await everything(client, workdir)
    await client.close()
    await tap.done()
    results = [e["params"]["result"] for e in events if e["method"] == "event/result"]
    assert "PATH=" in results[0]["content"]  # the tools did run and print their environment
    assert results[3]["environ"] == []  # the keys left the daemon's environment at start-up
    assert results[3]["store"] == sorted(
        KEYS
    )  # in-process code finds them in elelem_daemon.base.keys
    assert any("the provider broke" in json.dumps(a) for a in answers)
    assert [a[0] for a in answers[-2:]] == [-32602, -32602]  # the errors were there too
    assert b"elelem INFO" in tap.stderr  # and the logs, at their most talkative (debug)
    for where, text in {
        "stdout": tap.stdout.decode(errors="replace"),
        "stderr": tap.stderr.decode(errors="replace"),
        "events": json.dumps(events),
        "answers": json.dumps(answers),
        "context": context,
        "stored sessions": stored(env).decode(errors="replace"),
    }.items():
        assert CANARY not in text, where


async def test_the_documented_setting_lets_tools_see_the_keys(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    client, tap = await spawn_with_canary(spawn, env, ELELEM_TOOL_ENV_KEEP_KEYS="1")
    events, _, _ = await everything(client, workdir)
    results = [e["params"]["result"] for e in events if e["method"] == "event/result"]
    assert f"OPENAI_API_KEY={CANARY}" in results[0]["content"]
    assert results[1]["content"].strip() == f"{CANARY} {CANARY}"
