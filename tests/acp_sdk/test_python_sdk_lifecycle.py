"""ACP 1.21's session lifecycle from the official Python client: session/list,
session/resume (no replay), session/close (the session released, still stored),
mode and model switched as config options, additional workspace roots kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp_editor import TIMEOUT, Editor, acp, alive, daemon, gone

pytestmark = pytest.mark.e2e


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


async def prompt(conn, session_id: str, line: str):
    async with asyncio.timeout(TIMEOUT):
        return await conn.prompt(session_id=session_id, prompt=[acp.text_block(line)])


async def test_list_resume_and_close(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    other = tmp_path / "other"
    other.mkdir()
    async with daemon(tmp_path, editor) as (conn, _):
        answer = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        caps = answer.agent_capabilities.session_capabilities
        assert caps.resume is not None and caps.close is not None and caps.list is not None
        assert caps.additional_directories is not None
        sid = (
            await conn.new_session(
                cwd=str(project), mcp_servers=[], additional_directories=[str(other)]
            )
        ).session_id
        await prompt(conn, sid, "!echo first")
        await prompt(conn, sid, '!tool list {"path":"."}')
        (before,) = editor.of("tool_call")
        (listed,) = (await conn.list_sessions(cwd=str(project))).sessions
        assert listed.session_id == sid and listed.additional_directories == [str(other)]

        await conn.close_session(session_id=sid)
        with pytest.raises(acp.RequestError) as closed:
            await prompt(conn, sid, "!echo gone")
        assert closed.value.code == -32002  # an unknown session: it was released
        (stored,) = (await conn.list_sessions(cwd=str(project))).sessions
        assert stored.session_id == sid and stored.field_meta["elelem"]["open"] is False

        editor.updates.clear()
        resumed = await conn.resume_session(session_id=sid, cwd=str(project), mcp_servers=[])
        assert {o.id for o in resumed.config_options} >= {"mode", "model"}
        assert resumed.modes.current_mode_id == "build"
        said = await prompt(conn, sid, "!echo again")
        assert said.stop_reason == "end_turn"
        chunks = editor.of("user_message_chunk")
        assert chunks == []  # resume replays nothing: the client kept its history
        assert editor.said() == "again"
        await prompt(conn, sid, '!tool list {"path":"."}')
        (after,) = editor.of("tool_call")  # a new id: the client still draws the old call
        assert after.tool_call_id != before.tool_call_id

        await conn.close_session(session_id=sid)
        with pytest.raises(acp.RequestError):
            await conn.close_session(session_id=sid)  # closed twice: unknown now
    assert (
        "first"
        in (tmp_path / "home" / ".local" / "state")
        .joinpath("elelem", "sessions", f"{sid}.jsonl")
        .read_text()
    )


async def test_config_options_switch_mode_and_model(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        categories = {o.id: o.category for o in session.config_options}
        assert categories["mode"] == "mode" and categories["model"] == "model"
        assert session.modes.current_mode_id == "build"  # modes, for older clients
        answer = await conn.set_config_option(config_id="mode", session_id=sid, value="plan")
        options = {o.id: o for o in answer.config_options}
        assert options["mode"].current_value == "plan"
        await editor.until(lambda: "current_mode_update" in editor.kinds())
        assert editor.of("current_mode_update")[-1].current_mode_id == "plan"
        answer = await conn.set_config_option(config_id="model", session_id=sid, value="m2")
        assert {o.id: o for o in answer.config_options}["model"].current_value == "m2"
        with pytest.raises(acp.RequestError) as boolean:
            await conn.set_config_option(config_id="mode", session_id=sid, value=True)
        assert boolean.value.code == -32602
        await prompt(conn, sid, "/model")
        assert "m2" in editor.said()


async def test_relative_or_too_many_roots_are_refused(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        for roots in (["relative/dir"], [f"/r{n}" for n in range(65)]):
            with pytest.raises(acp.RequestError) as refused:
                await conn.new_session(
                    cwd=str(project), mcp_servers=[], additional_directories=roots
                )
            assert refused.value.code == -32602


async def test_close_cancels_a_running_turn_and_kills_its_command(
    tmp_path: Path, project: Path
) -> None:
    editor = Editor()
    editor.answers = ["allow"]
    sleeping = ["sleep", "300.4242"]  # exec'd by the shell, or its child
    command = '!tool execute {"command":"sleep 300.4242"}'
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        running = asyncio.ensure_future(prompt(conn, sid, command))
        async with asyncio.timeout(TIMEOUT):
            await editor.asked.wait()  # asked, and allowed: the command starts
        for _ in range(400):  # a bound, not a timing: until the command runs
            if alive(sleeping):
                break
            await asyncio.sleep(0.05)
        assert alive(sleeping)
        await conn.close_session(session_id=sid)
        answer = await running
        assert answer.stop_reason == "cancelled"
        assert await gone(sleeping)
