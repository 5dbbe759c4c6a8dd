"""Review over ACP (issue 16), with the official Python client: `review` is a
`session/request_permission` carrying the change as ACP `diff` content, and an accepted
change lands through `fs/write_text_file`; a buffer changed since the agent read it is
a conflict, never shown. ACP has no partial acceptance (docs/acp.md says why)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp_editor import TIMEOUT, Editor, acp, daemon

pytestmark = pytest.mark.e2e

OLD = "".join(f"line {i}\n" for i in range(1, 21))
NEW = OLD.replace("line 2\n", "LINE 2\n").replace("line 18\n", "LINE 18\n")
CONFLICT = "conflict: the file changed since you read it; read it again"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def reviewing(tmp_path: Path) -> Path:
    """The user's permissions say `review` for write and edit."""
    config = tmp_path / "home" / ".config" / "elelem"
    config.mkdir(parents=True)
    (config / "permissions").write_text("write review\nedit review\n")
    return config


async def prompt(conn: Any, session_id: str, value: str) -> Any:
    async with asyncio.timeout(TIMEOUT):
        return await conn.prompt(session_id=session_id, prompt=[acp.text_block(value)])


def write(content: str) -> str:
    return f"!tool write {json.dumps({'path': 'a.txt', 'content': content})}"


async def test_review_asks_with_the_diff_and_writes_through_the_editor(
    tmp_path: Path, project: Path, reviewing: Path
) -> None:
    editor = Editor()
    buffer = str(project / "a.txt")
    editor.buffers[buffer] = OLD  # open and unsaved: not on disk
    editor.answers = ["allow"]
    async with daemon(tmp_path, editor, fs=True) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(conn, sid, write(NEW))
    (asked,) = editor.permissions
    call = asked["toolCall"]
    assert call.status == "pending" and call.kind == "edit"
    diffs = [c for c in call.content if c.type == "diff"]
    assert [(d.path, d.old_text, d.new_text) for d in diffs] == [
        (buffer, "line 1\nline 2\nline 3\nline 4\nline 5\n",
         "line 1\nLINE 2\nline 3\nline 4\nline 5\n"),
        (buffer, "line 15\nline 16\nline 17\nline 18\nline 19\nline 20\n",
         "line 15\nline 16\nline 17\nLINE 18\nline 19\nline 20\n"),
    ]  # fmt: skip
    assert [o.option_id for o in asked["options"]] == ["allow", "deny", "always", "never"]
    assert editor.writes == [(buffer, NEW)]  # all of it: ACP cannot take a part
    assert not (project / "a.txt").exists()
    (done,) = editor.of("tool_call_update")
    assert done.status == "completed" and done.raw_output["path"] == "a.txt"


async def test_rejecting_the_review_writes_nothing(
    tmp_path: Path, project: Path, reviewing: Path
) -> None:
    editor = Editor()
    editor.buffers[str(project / "a.txt")] = OLD
    editor.answers = ["deny"]
    async with daemon(tmp_path, editor, fs=True) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(conn, sid, write(NEW))
    assert editor.writes == []
    (done,) = editor.of("tool_call_update")
    assert done.status == "failed"
    assert done.raw_output["error"] == "User denied permission: write"


async def test_a_buffer_changed_since_the_read_is_a_conflict(
    tmp_path: Path, project: Path, reviewing: Path
) -> None:
    class Typing(Editor):
        async def read_text_file(self, path: str, session_id: str, **rest: Any) -> Any:
            answer = await super().read_text_file(path, session_id, **rest)
            self.buffers[path] = OLD + "typed by the user\n"  # once the agent has read
            return answer

    editor = Typing()
    buffer = str(project / "a.txt")
    editor.buffers[buffer] = OLD
    script = json.dumps([["read", {"path": "a.txt"}], ["write", {"path": "a.txt", "content": NEW}]])
    async with daemon(tmp_path, editor, fs=True) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(conn, sid, f"!tools {script}")
    assert editor.permissions == [] and editor.writes == []
    read_done, write_done = editor.of("tool_call_update")
    assert read_done.status == "completed"
    assert write_done.status == "failed" and write_done.raw_output["error"] == CONFLICT
    assert editor.buffers[buffer] == OLD + "typed by the user\n"


async def test_by_default_acp_writes_inside_the_folder_unasked(
    tmp_path: Path, project: Path
) -> None:
    editor = Editor()
    editor.buffers[str(project / "a.txt")] = OLD
    async with daemon(tmp_path, editor, fs=True) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(conn, sid, write(NEW))
    assert editor.permissions == [] and editor.writes == [(str(project / "a.txt"), NEW)]
