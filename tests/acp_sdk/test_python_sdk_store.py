"""Conformance, Python SDK: permission requests answered every way, diffs, and stored
sessions listed, loaded with their history replayed, and locked to one process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp_editor import TIMEOUT, Editor, acp, daemon

pytestmark = pytest.mark.e2e
ECHO = '!tool execute {"command":"echo hi"}'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


async def prompt(conn, session_id: str, text: str):
    async with asyncio.timeout(TIMEOUT):
        return await conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])


async def new(conn, project: Path) -> str:
    return (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id


async def test_permission_answered_both_ways(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    editor.answers = ["allow", "deny", None]  # None: the client answers "cancelled"
    async with daemon(tmp_path, editor) as (conn, _):
        sid = await new(conn, project)
        for _ in range(3):
            await prompt(conn, sid, ECHO)
    allowed, denied, unanswered = editor.of("tool_call_update")
    assert allowed.status == "completed" and allowed.raw_output["content"] == "hi\n"
    assert denied.status == "failed"
    assert denied.raw_output["error"] == "User denied permission: execute"
    assert unanswered.raw_output["error"] == (
        "Permission denied: execute (the user must approve it, and no one could answer)"
    )
    asked = editor.permissions[0]
    options = [(o.option_id, o.kind) for o in asked["options"]]
    assert options == [
        ("allow", "allow_once"),
        ("deny", "reject_once"),
        ("always", "allow_always"),
        ("never", "reject_always"),
    ]
    call = asked["toolCall"]
    assert call.tool_call_id == editor.of("tool_call")[0].tool_call_id
    assert call.status == "pending" and call.kind == "execute"
    assert call.raw_input == {"command": "echo hi"}
    assert call.content[-1].content.text == "Allow execute: echo hi?"


async def test_always_and_never_are_remembered_for_the_session(
    tmp_path: Path, project: Path
) -> None:
    editor = Editor()
    editor.answers = ["always", "never"]
    async with daemon(tmp_path, editor) as (conn, _):
        first, second = await new(conn, project), await new(conn, project)
        for _ in range(2):
            await prompt(conn, first, ECHO)
            await prompt(conn, second, ECHO)
    assert len(editor.permissions) == 2  # each session asked once
    statuses = [u.status for u in editor.of("tool_call_update")]
    assert statuses == ["completed", "failed", "completed", "failed"]


async def test_a_write_outside_the_project_shows_its_diff(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    editor.answers = ["allow"]
    outside = tmp_path / "outside.txt"
    async with daemon(tmp_path, editor) as (conn, _):
        sid = await new(conn, project)
        await prompt(conn, sid, '!tool write {"path":"../outside.txt","content":"new\\n"}')
        (project / "a.txt").write_text("one\ntwo\nthree\n")
        await prompt(conn, sid, '!tool edit {"path":"a.txt","old":"two","new":"2"}')
    shown = editor.permissions[0]["toolCall"].content[0]
    assert (shown.type, shown.path, shown.old_text, shown.new_text) == (
        "diff",
        str(outside),
        None,
        "new\n",
    )
    written, edited = editor.of("tool_call_update")
    assert written.content[0].new_text == "new\n" and outside.read_text() == "new\n"
    assert "+new" in written.raw_output["diff"]
    hunk = edited.content[0]
    assert (hunk.path, hunk.old_text, hunk.new_text) == (
        str(project / "a.txt"),
        "one\ntwo\nthree\n",
        "one\n2\nthree\n",
    )
    assert len(editor.permissions) == 1  # an edit inside the project does not ask


async def test_load_replays_the_history_and_continues(tmp_path: Path, project: Path) -> None:
    first = Editor()
    async with daemon(tmp_path, first) as (conn, _):
        sid = await new(conn, project)
        await prompt(conn, sid, "!echo one")
        await prompt(conn, sid, "!echo two")
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        listed = await conn.list_sessions(cwd=str(project))
        assert [(s.session_id, s.title) for s in listed.sessions] == [(sid, "!echo one")]
        assert listed.sessions[0].updated_at
        loaded = await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        replayed = [
            (u.session_update, u.content.text)
            for _, u in editor.updates
            if u.session_update in ("user_message_chunk", "agent_message_chunk")
        ]
        assert replayed == [
            ("user_message_chunk", "!echo one"),
            ("agent_message_chunk", "one"),
            ("user_message_chunk", "!echo two"),
            ("agent_message_chunk", "two"),
        ]
        assert loaded.config_options is not None
        editor.updates.clear()
        await prompt(conn, sid, "!echo three")
        await prompt(conn, sid, "/context json")
    messages = json.loads(editor.said().split("three", 1)[1].strip().strip("`"))
    assert [m["content"] for m in messages if m["role"] != "system"] == [
        "!echo one", "one", "!echo two", "two", "!echo three", "three",
    ]  # fmt: skip


async def test_load_errors(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        with pytest.raises(acp.RequestError) as unknown:
            await conn.load_session(cwd=str(project), session_id="nope", mcp_servers=[])
        assert unknown.value.code == -32002
        assert unknown.value.data == {"kind": "unknown_session", "sessionId": "nope"}
        with pytest.raises(acp.RequestError) as invalid:
            await conn.load_session(cwd=str(project), session_id="../etc", mcp_servers=[])
        assert invalid.value.code == -32002
        with pytest.raises(acp.RequestError) as cursor:
            await conn.list_sessions(cursor="abc")
        assert cursor.value.code == -32602


async def test_an_open_session_is_locked_to_its_process(tmp_path: Path, project: Path) -> None:
    async with daemon(tmp_path, Editor()) as (conn, _):
        sid = await new(conn, project)
        await prompt(conn, sid, "!echo mine")
        again = await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        assert again is not None  # already open here: replayed, not reopened
        async with daemon(tmp_path, Editor()) as (other, _):
            with pytest.raises(acp.RequestError) as locked:
                await other.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
            assert locked.value.data["kind"] == "session_locked"
    async with daemon(tmp_path, Editor()) as (conn, _):  # released when the first one ended
        await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])


async def test_a_compact_whose_provider_is_dead_changes_nothing(
    tmp_path: Path, project: Path
) -> None:
    """/compact sends the summary request to a dead server: the history and the stored
    file stay as they were, byte for byte, and the error is said once."""
    import socket

    with socket.socket() as s:  # a port nothing listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = {
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "OPENAI_API_KEY": "none",
        "ELELEM_RETRIES": "0",
    }
    editor = Editor()
    async with daemon(tmp_path, editor, env=dead) as (conn, _):
        sid = await new(conn, project)
        await prompt(conn, sid, "!echo one")
        await prompt(conn, sid, "!echo two")
        await prompt(conn, sid, "/provider openai")
        stored = next((tmp_path / "home").rglob(f"{sid}.jsonl"))
        editor.updates.clear()
        await prompt(conn, sid, "/context json")
        context = editor.said()
        before = stored.read_bytes()
        editor.updates.clear()
        answer = await prompt(conn, sid, "/compact")
        said = editor.said()
        editor.updates.clear()
        await prompt(conn, sid, "/context json")
        assert editor.said() == context
    assert answer.stop_reason == "end_turn"
    assert said.count("cannot connect to http://127.0.0.1:") == 1
    assert "compact failed: the conversation is kept (/clear starts over)" in said
    assert stored.read_bytes() == before
