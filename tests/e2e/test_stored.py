"""Stored sessions and the permission policy, over the wire (protocol.md: "Stored
sessions", "Permissions")."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from elelem_daemon.builtins.permissions import NO_ANSWER
from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


async def opened(spawn, on_ask=None) -> Client:
    client = await spawn(on_ask=on_ask)
    await within(client.initialize())
    return client


async def test_a_daemon_killed_mid_turn_keeps_every_completed_turn(spawn, workdir) -> None:
    first = await opened(spawn)
    session = (await within(first.new_session()))["sessionId"]
    assert (await within(first.turn(session, "!echo one")))["reply"] == "one"
    assert (await within(first.turn(session, "!echo two")))["reply"] == "two"
    turn = await first.start_turn(session, "!stream 100000 20")
    async for event in turn.events():
        if event["method"] == "event/saying":
            break
    os.kill(first.process.pid, signal.SIGKILL)
    assert await within(first.process.wait()) == -signal.SIGKILL

    second = await opened(spawn)
    (entry,) = await within(second.list_sessions())
    assert entry["sessionId"] == session and entry["cwd"] == str(workdir.resolve())
    assert (entry["open"], entry["stored"], entry["title"]) == (False, True, "!echo one")
    loaded = await within(second.load_session(session))
    assert loaded["sessionId"] == session and loaded["title"] == "!echo one"
    # the count goes on from the stored turns (1, 2, and 3 in flight): turn ids stay
    assert (loaded["provider"], loaded["model"], loaded["turns"]) == ("stub", "stub", 3)
    assert {"read", "execute"} <= {t["name"] for t in loaded["tools"]}
    assert loaded["messages"] == [
        {"role": "user", "content": "!echo one"},
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": "!echo two"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "!stream 100000 20"},  # in flight when it died
        {"role": "assistant", "content": "[interrupted]"},
    ]
    assert (await within(second.turn(session, "!echo three")))["reply"] == "three"
    context = await within(second.context(session))
    assert [m["content"] for m in context[1:]][-2:] == ["!echo three", "three"]
    live, stored = await within(second.list_sessions())  # open, and stored
    assert (live["sessionId"], live["turns"], "stored" in live) == (session, 4, False)
    assert (stored["sessionId"], stored["open"], stored["stored"]) == (session, True, True)


async def test_load_errors_and_loading_an_open_session(spawn, tmp_path) -> None:
    client = await opened(spawn)
    for bad, message in (("nope", "no stored session 'nope'"), ("../x", "invalid session id")):
        with pytest.raises(RpcError) as error:
            await within(client.request("session/load", {"sessionId": bad}))
        # -32002: no stored session has that id (the one code table, jsonrpc/errors.py)
        assert (error.value.code, error.value.kind) == (-32002, "unknown_session")
        assert message in error.value.message
    with pytest.raises(RpcError) as error:
        await within(client.request("session/load", {}))
    assert error.value.kind == "invalid_params"

    session = (await within(client.new_session()))["sessionId"]
    await within(client.turn(session, "!echo hi"))
    again = await within(client.request("session/load", {"sessionId": session}))
    assert again["sessionId"] == session and again["turns"] == 1
    assert again["messages"][-1] == {"role": "assistant", "content": "hi"}
    assert len([s for s in await within(client.list_sessions()) if not s.get("stored")]) == 1

    other = await opened(spawn)
    with pytest.raises(RpcError) as error:
        await within(other.request("session/load", {"sessionId": session}))
    assert (error.value.code, error.value.kind) == (-32003, "session_locked")
    with pytest.raises(RpcError) as error:
        await within(other.delete_session(session))
    assert error.value.kind == "session_locked"
    await within(client.close_session(session))
    moved = await within(
        other.request("session/load", {"sessionId": session, "model": "m2", "trusted": False})
    )
    assert moved["model"] == "m2" and len(moved["messages"]) == 2


async def test_list_filters_by_cwd_and_delete_removes(spawn, env, tmp_path, workdir) -> None:
    client = await opened(spawn)
    here = (await within(client.new_session()))["sessionId"]
    there = (await within(client.new_session(cwd=str(tmp_path))))["sessionId"]
    for session in (here, there):
        await within(client.turn(session, f"!echo {session}"))
    await within(client.close_session(there))
    await within(client.command(here, "/model m9"))
    mine = await within(client.list_sessions(str(workdir)))
    assert [(s["sessionId"], s.get("open"), s["model"]) for s in mine] == [
        (here, None, "m9"),  # open
        (here, True, "m9"),  # stored, carrying what the open session uses now
    ]
    theirs = await within(client.list_sessions(str(tmp_path)))
    assert [(s["sessionId"], s["open"]) for s in theirs] == [(there, False)]
    everything = await within(client.list_sessions())
    assert [s["sessionId"] for s in everything] == [here, there, here]  # there: saved last

    await within(client.delete_session(there))
    assert await within(client.request("session/delete", {"sessionId": here})) == {}  # open
    assert await within(client.list_sessions()) == []
    with pytest.raises(RpcError) as error:
        await within(client.turn(here, "!echo closed"))
    assert error.value.kind == "unknown_session"
    with pytest.raises(RpcError) as error:
        await within(client.request("session/delete", {"sessionId": here}))
    assert error.value.kind == "unknown_session"
    assert list(Path(env["XDG_STATE_HOME"]).rglob("*.jsonl")) == []


async def test_a_terminal_session_loads_in_the_daemon(spawn, env, workdir) -> None:
    subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "ask", "!echo from the terminal"],
        env=env,
        cwd=workdir,
        capture_output=True,
        timeout=60,
        check=True,
    )
    client = await opened(spawn)
    (entry,) = await within(client.list_sessions())
    loaded = await within(client.request("session/load", {"sessionId": entry["sessionId"]}))
    assert loaded["messages"][-1] == {"role": "assistant", "content": "from the terminal"}


def defaults_only(env: dict[str, str]) -> None:
    """Back to the built-in rules: execute asks, write and edit ask outside the cwd."""
    (Path(env["XDG_CONFIG_HOME"]) / "elelem" / "permissions").write_text("")


async def test_a_permission_question_carries_the_tool_and_its_diff(spawn, env, tmp_path) -> None:
    defaults_only(env)
    questions: list[dict] = []
    answers = iter(["deny", "always"])

    def answer(params: dict) -> str:
        questions.append(params)
        return next(answers)

    client = await opened(spawn, on_ask=answer)
    session = (await within(client.new_session()))["sessionId"]
    write = {"path": "../outside.txt", "content": "hello\n"}
    seen: list[dict] = []
    await within(client.turn(session, f"!tool write {json.dumps(write)}", on_event=seen.append))
    asked = questions[0]
    assert asked == {
        "sessionId": session,
        "turnId": 1,
        "kind": "permission",
        "prompt": "Allow write: ../outside.txt?",
        "options": ["allow", "deny", "always", "never"],
        "tool": {
            "name": "write",
            "arguments": write,
            "diff": "--- /dev/null\n+++ ../outside.txt\n@@ -0,0 +1 @@\n+hello\n",
        },
    }
    results = [e["params"] for e in seen if e["method"] == "event/result"]
    assert results[0]["result"] == {
        "error": "User denied permission: write",
        "name": "write",
        "args": write,
        "ok": False,
    }
    assert not (tmp_path / "outside.txt").exists()

    seen.clear()
    await within(client.turn(session, f"!tool write {json.dumps(write)}", on_event=seen.append))
    await within(client.turn(session, f"!tool write {json.dumps(write)}", on_event=seen.append))
    results = [e["params"]["result"] for e in seen if e["method"] == "event/result"]
    assert all(r["ok"] for r in results) and len(questions) == 2  # "always": asked once
    assert results[0]["diff"].startswith("--- /dev/null\n")
    assert (tmp_path / "outside.txt").read_text() == "hello\n"


async def test_a_client_that_cannot_answer_gets_a_denial_the_model_reads(spawn, env) -> None:
    defaults_only(env)
    client = await opened(spawn)  # no capabilities.input.ask
    session = (await within(client.new_session()))["sessionId"]
    seen: list[dict] = []
    prompt = '!tool execute {"command": "touch ran"}'
    result = await within(client.turn(session, prompt, on_event=seen.append))
    done = next(e["params"] for e in seen if e["method"] == "event/result")
    assert done["result"]["error"] == f"Permission denied: execute ({NO_ANSWER})"
    assert result["reply"] == "done."  # the model read it and went on


async def test_a_deny_rule_in_the_project_is_final(spawn, env, workdir) -> None:
    (workdir / ".agents").mkdir()
    (workdir / ".agents" / "permissions").write_text("execute deny\n")
    asked = asyncio.Event()
    client = await opened(spawn, on_ask=lambda params: asked.set() or "allow")
    session = (await within(client.new_session(trusted=True)))["sessionId"]
    seen: list[dict] = []
    await within(client.turn(session, '!tool bash {"command": "true"}', on_event=seen.append))
    done = next(e["params"] for e in seen if e["method"] == "event/result")
    assert done["result"]["error"] == "Permission denied: execute"
    assert not asked.is_set()
