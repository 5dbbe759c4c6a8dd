"""Modes and plans through the official Python ACP client: modes listed in session/new
and session/load, set with session/set_mode (and /mode), reported with
current_mode_update; the todo tool's `plan` updates with their statuses, redrawn on load."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp_editor import TIMEOUT, Editor, acp, daemon

pytestmark = pytest.mark.e2e
IDS = ["build", "plan", "review", "verify"]
TODOS = [
    {"content": "read the code", "status": "completed"},
    {"content": "fix the bug", "status": "in_progress"},
    {"content": "run the tests", "status": "pending"},
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


async def prompt(conn, session_id: str, value: str):
    async with asyncio.timeout(TIMEOUT):
        return await conn.prompt(session_id=session_id, prompt=[acp.text_block(value)])


async def test_modes_are_listed_set_and_reported(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        assert session.modes.current_mode_id == "build"
        assert [m.id for m in session.modes.available_modes] == IDS
        assert all(m.name and m.description for m in session.modes.available_modes)
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        await editor.until(lambda: len(editor.of("current_mode_update")) == 1)
        assert editor.of("current_mode_update")[0].current_mode_id == "plan"
        option = [o for o in editor.of("config_option_update")[-1].config_options][0]
        assert (option.id, option.current_value) == ("mode", "plan")
        with pytest.raises(acp.RequestError) as unknown:
            await conn.set_session_mode(session_id=sid, mode_id="nope")
        assert unknown.value.code == -32602
        assert unknown.value.data["kind"] == "unknown_mode" and unknown.value.data["modes"] == IDS
        await prompt(conn, sid, "/mode review")  # the command is the same door
        await editor.until(lambda: len(editor.of("current_mode_update")) == 2)
        assert editor.of("current_mode_update")[1].current_mode_id == "review"


async def test_plan_mode_refuses_a_write_through_acp(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        await prompt(conn, sid, '!tool write {"path": "x.txt", "content": "y"}')
    done = editor.of("tool_call_update")[0]
    assert done.status == "failed" and "not allowed in plan mode" in done.raw_output["error"]
    assert not editor.permissions  # refused before the permission policy asks
    assert not (project / "x.txt").exists()


async def test_todo_sends_plan_updates_and_load_redraws_the_last(
    tmp_path: Path, project: Path
) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id="verify")
        await prompt(conn, sid, "!tool todo " + json.dumps({"todos": TODOS[:1]}))
        await prompt(conn, sid, "!tool todo " + json.dumps({"todos": TODOS}))
    plans = editor.of("plan")
    assert len(plans) == 2
    shown = [{"content": e.content, "status": e.status} for e in plans[-1].entries]
    assert shown == TODOS and {e.priority for e in plans[-1].entries} == {"medium"}
    call = editor.of("tool_call")[0]
    assert call.kind == "think"

    again = Editor()
    async with daemon(tmp_path, again) as (conn, _):
        loaded = await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        assert loaded.modes.current_mode_id == "verify"  # stored with the session
        await again.until(lambda: bool(again.of("plan")))
    (redrawn,) = again.of("plan")
    assert [{"content": e.content, "status": e.status} for e in redrawn.entries] == TODOS
