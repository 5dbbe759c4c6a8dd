"""The `task` sub-agent over ACP with the official Python client (issue 20): the child's
progress is the content of the parent task call's `tool_call_update`s, its final answer
the call's result; a cancelled parent ends the child and its tool's process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp_editor import TIMEOUT, Editor, acp, daemon
from support.processes import alive

pytestmark = pytest.mark.e2e

SLOW_READ = """
from elelem_daemon.builtins.shell import run

def register(plugin):
    @plugin.tool("slowread", "Reads slowly", {}, kind="read")
    async def slowread(session, args):
        return await run(["sleep", "32.5"], session.cwd)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def task(prompt: str) -> list:
    return [acp.text_block("!tool task " + json.dumps({"prompt": prompt}))]


async def test_the_child_shows_in_the_task_call_and_its_answer_is_the_result(
    tmp_path: Path, project: Path
) -> None:
    (project / "a.txt").write_text("hello\n")
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        async with asyncio.timeout(TIMEOUT):
            answer = await conn.prompt(session_id=sid, prompt=task('!tool read {"path": "a.txt"}'))
    assert answer.stop_reason == "end_turn"
    calls = editor.of("tool_call")
    assert [c.title for c in calls] == ['Task: !tool read {"path": "a.txt"}']
    assert calls[0].kind == "think"
    ident = calls[0].tool_call_id
    updates = editor.of("tool_call_update")
    assert {u.tool_call_id for u in updates} == {ident}  # nothing else is a call of its own
    progress = [u for u in updates if u.status == "in_progress"]
    shown = progress[-1].content[0].content.text
    assert "+ Read `a.txt`" in shown and "  ✓" in shown and "done." in shown
    last = updates[-1]
    assert last.status == "completed"
    assert last.raw_output == {"result": "done.", "ok": True}
    assert last.content[0].content.text == "done."
    assert editor.said() == "let me check.\n\ndone."  # the child's text is not the reply


async def test_cancelling_the_parent_cancels_the_child(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home"
    (home / ".agents" / "plugins").mkdir(parents=True)
    (home / ".agents" / "plugins" / "slow.py").write_text(SLOW_READ)
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, process):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=task("!tool slowread {}"))
        )
        await editor.until(
            lambda: any(
                u.status == "in_progress" and "slowread" in u.content[0].content.text
                for u in editor.of("tool_call_update")
            )
        )
        command = ["sleep", "32.5"]
        async with asyncio.timeout(TIMEOUT):
            while not alive(command):
                await asyncio.sleep(0.02)
        await conn.cancel(session_id=sid)
        async with asyncio.timeout(TIMEOUT):
            answer = await prompt
            while alive(command):
                await asyncio.sleep(0.02)
    assert answer.stop_reason == "cancelled"
    assert editor.of("tool_call_update")[-1].status == "failed"
