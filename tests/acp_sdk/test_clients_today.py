"""Replays of codecompanion, avante and acpx (clients.py) for what issue 38 added: the
title a prompt gives (`session_info_update`), message ids, the `skill` call's title, a
cancelled call replayed as cancelled, `/steer` not advertised, and one code for an
unknown session. Every message is checked against ACP 1.21 and SDK 2.4.0's schemas."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.acp_schema import Checker
from test_clients import ACPX, AVANTE, CODECOMPANION, buffers, by_kind, text

from clients import Client

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    skill = folder / ".agents" / "skills" / "review-pr"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: review-pr\ndescription: Review a pull request\n---\nRead the diff first.\n"
    )
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# Demo\n")
    return folder


async def opened(client: Client, hello: dict, project: Path) -> str:
    client.checker = Checker()
    assert "result" in await client.request("initialize", hello)
    new = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
    return str(new["result"]["sessionId"])


async def prompt(client: Client, sid: str, line: str) -> dict:
    answer = await client.request("session/prompt", {"sessionId": sid, "prompt": text(line)})
    assert "result" in answer, answer
    return answer["result"]


async def test_codecompanion_gets_a_title_a_skills_title_and_message_ids(
    home: Path, project: Path
) -> None:
    client = await Client.start(home, project, buffers(project))
    sid = await opened(client, CODECOMPANION, project)
    await prompt(client, sid, "Hi!")
    assert [u["title"] for u in client.of("session_info_update")] == ["Hi!"]
    await prompt(client, sid, '!tool skill {"name": "review-pr"}')
    titles = [u["title"] for u in client.of("tool_call")]
    assert titles[-1] == "Skill: review-pr"  # codecompanion draws `Read: Skill: review-pr`
    await prompt(client, sid, "/compact")
    retitled = client.of("session_info_update")
    assert len(retitled) == 2 and retitled[-1]["title"] != "Hi!"
    chunks = client.of("agent_message_chunk")
    assert all(isinstance(u.get("messageId"), str) for u in chunks)
    names = {c["name"] for c in client.of("available_commands_update")[-1]["availableCommands"]}
    assert "steer" not in names and "exit" not in names
    assert await client.close() == 0


async def test_avante_cancels_a_call_and_a_load_shows_it_cancelled(
    home: Path, project: Path
) -> None:
    """avante sends `session/cancel` from its stop key, and loads sessions from its
    history picker: the call it stopped is drawn failed, `cancelled`, not running."""
    answers = {**buffers(project), "session/request_permission": by_kind("allow_once")}
    client = await Client.start(home, project, answers)
    sid = await opened(client, AVANTE, project)
    client.next_id += 1
    ident = client.next_id
    line = text('!tool execute {"command": "sleep 600"}')
    request = {"jsonrpc": "2.0", "id": ident, "method": "session/prompt",
               "params": {"sessionId": sid, "prompt": line}}  # fmt: skip
    await client.line(json.dumps(request) + "\n")
    await client.expect("tool_call")
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
    await client.line(json.dumps(cancel) + "\n")
    while (answer := await client.read()).get("id") != ident:
        pass
    assert answer["result"]["stopReason"] == "cancelled"
    assert (await client.request("session/close", {"sessionId": sid}))["result"] == {}
    mark = len(client.updates)
    load = {"sessionId": sid, "cwd": str(project), "mcpServers": []}
    assert "result" in await asyncio.wait_for(client.request("session/load", load), 60)
    (call,) = client.of("tool_call", mark)
    (ended,) = client.of("tool_call_update", mark)
    assert call["title"] == "`sleep 600`" and ended["toolCallId"] == call["toolCallId"]
    assert (ended["status"], ended["rawOutput"]["error"]) == ("failed", "cancelled")
    assert await client.close() == 0


async def test_acpx_titles_the_session_and_unknown_sessions_share_one_code(
    home: Path, project: Path
) -> None:
    """`acpx sessions` shows the title session/list gives, the one session_info_update
    said; `acpx sessions close` of a session gone and `acpx prompt` to one get -32002."""
    client = await Client.start(home, project)
    sid = await opened(client, ACPX, project)
    await prompt(client, sid, "!echo titled")
    (info,) = client.of("session_info_update")
    (listed,) = (await client.request("session/list", {}))["result"]["sessions"]
    assert listed["title"] == info["title"] == "!echo titled"
    assert (await client.request("session/delete", {"sessionId": sid}))["result"] == {}
    for method in ("session/close", "session/prompt", "session/resume", "session/load"):
        params = {"sessionId": sid, "cwd": str(project), "mcpServers": [], "prompt": text("x")}
        if method != "session/prompt":
            del params["prompt"]
        error = (await client.request(method, params))["error"]
        assert (error["code"], error["data"]["kind"]) == (-32002, "unknown_session"), method
    assert await client.close() == 0
