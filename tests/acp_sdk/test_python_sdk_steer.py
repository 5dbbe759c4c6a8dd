"""Steering over ACP with the official Python client (issue 20): a `session/prompt` sent
while a turn runs is queued as a steer (an extension, docs/acp.md `_meta`): the model
reads it with the running turn's next request, and it is answered when that turn ends,
with `_meta.elelem.steer` `sent`; one the turn never took says `dropped`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp_editor import TIMEOUT, Editor, acp, daemon

pytestmark = pytest.mark.e2e


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def waiting(gate: Path) -> str:
    command = f"while [ ! -e {gate} ]; do sleep 0.05; done"
    return f"!tool execute {json.dumps({'command': command})}"


async def queued(conn, sid: str, text: str, project: Path) -> asyncio.Task:
    """Send a prompt during the turn; once a later request is answered, it is queued
    (requests start in the order they came)."""
    steer = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block(text)]))
    async with asyncio.timeout(TIMEOUT):
        await conn.list_sessions(cwd=str(project))
    return steer


async def test_a_prompt_during_a_turn_is_a_steer_the_model_reads(
    tmp_path: Path, project: Path
) -> None:
    editor = Editor()
    editor.answers = ["allow"]
    gate = project / "gate"
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        first = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=[acp.text_block(waiting(gate))])
        )
        await editor.until(lambda: "tool_call" in editor.kinds())
        steer = await queued(conn, sid, "also this", project)
        assert not steer.done()  # answered with the turn, not before
        gate.touch()
        async with asyncio.timeout(TIMEOUT):
            answer, steered = await asyncio.gather(first, steer)
    assert answer.stop_reason == "end_turn"
    assert steered.stop_reason == "end_turn"
    assert steered.field_meta == {"elelem": {"steer": "sent"}}
    assert editor.said().endswith("steered: also this. done.")


async def test_a_steer_the_cancelled_turn_never_took_is_dropped(
    tmp_path: Path, project: Path
) -> None:
    editor = Editor()
    editor.answers = ["allow"]
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        first = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=[acp.text_block(waiting(project / "never"))])
        )
        await editor.until(lambda: "tool_call" in editor.kinds())
        steer = await queued(conn, sid, "too late", project)
        await conn.cancel(session_id=sid)
        async with asyncio.timeout(TIMEOUT):
            answer, steered = await asyncio.gather(first, steer)
    assert answer.stop_reason == "cancelled"
    assert steered.stop_reason == "cancelled"
    assert steered.field_meta == {"elelem": {"steer": "dropped"}}


async def test_a_command_during_a_turn_is_refused_busy(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    editor.answers = ["allow"]
    gate = project / "gate"
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        first = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=[acp.text_block(waiting(gate))])
        )
        await editor.until(lambda: "tool_call" in editor.kinds())
        with pytest.raises(acp.RequestError) as caught:
            async with asyncio.timeout(TIMEOUT):
                await conn.prompt(session_id=sid, prompt=[acp.text_block("/clear")])
        assert caught.value.code == -32001
        gate.touch()
        async with asyncio.timeout(TIMEOUT):
            assert (await first).stop_reason == "end_turn"
