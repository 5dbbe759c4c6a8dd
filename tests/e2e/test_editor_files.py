"""The editor's files through the real daemon (`capabilities.fs`, as ACP's): an
attachment, an `@` mention and the `read` tool see the editor's unsaved text, a file
the editor does not have (-32002) is read from the disk, an editor that fails a read
refuses the attachment clearly (nothing sent, no turn used), `write` lands in the
editor, and a client that offers nothing keeps the disk. Answers come from the test's
client, as Neovim and VS Code give them from their buffers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import model as models
from support.model import Model

from elelem_daemon.jsonrpc.client import Client
from elelem_daemon.jsonrpc.errors import RpcError

from .conftest import within

pytestmark = pytest.mark.e2e

DISK = "def main():\n    return 0\n"
UNSAVED = "def main():\n    return 1  # not saved yet\n"


@pytest.fixture
def model() -> Any:
    yield from models.serving()


@pytest.fixture
def project(workdir: Path) -> Path:
    (workdir / "app.py").write_text(DISK)
    (workdir / "notes.md").write_text("# notes\n")
    (workdir / "locked.py").write_text("secret = 1\n")
    return workdir


class Editor:
    """The buffers a client holds: `fs/read_text_file` answers from them, -32002 for a
    file it has no buffer of, an error for `locked.py`; `fs/write_text_file` fills one."""

    def __init__(self, project: Path) -> None:
        self.buffers = {str(project / "app.py"): UNSAVED, str(project / "new.py"): "NEW = 1\n"}
        self.locked = str(project / "locked.py")
        self.reads: list[dict[str, Any]] = []
        self.writes: list[dict[str, Any]] = []

    def read(self, params: dict[str, Any]) -> dict[str, Any]:
        self.reads.append(params)
        if params["path"] == self.locked:
            raise RpcError(-32603, "the buffer is being reloaded")
        if params["path"] not in self.buffers:
            raise RpcError(-32002, "no such buffer")
        return {"content": self.buffers[params["path"]]}

    def write(self, params: dict[str, Any]) -> None:
        self.writes.append(params)
        self.buffers[params["path"]] = params["content"]

    def serve(self, client: Client) -> None:
        client.handlers["fs/read_text_file"] = self.read
        client.handlers["fs/write_text_file"] = self.write


async def test_attachments_and_mentions_read_the_editors_buffers(
    spawn: Any, env: dict[str, str], model: Model, project: Path
) -> None:
    client = await spawn("-p", "openai", env=models.env(model, env))
    editor = Editor(project)
    editor.serve(client)
    await within(client.initialize(fs={"readTextFile": True}), 30)
    sid = (await within(client.new_session(cwd=str(project)), 30))["sessionId"]
    files = [{"type": "file", "path": "app.py"}, {"type": "file", "path": "new.py"}]
    await within(client.turn(sid, "see @notes.md", attachments=files), 30)
    assert model.user() == (
        'see @notes.md\n\n<attachment type="file" path="notes.md">\n# notes\n</attachment>\n\n'
        f'<attachment type="file" path="app.py">\n{UNSAVED}</attachment>\n\n'
        '<attachment type="file" path="new.py">\nNEW = 1\n</attachment>'
    )  # notes.md: the editor has no buffer of it, so the disk; new.py: only in the editor
    asked = {(r["sessionId"], Path(r["path"]).name) for r in editor.reads}
    assert {(sid, "app.py"), (sid, "new.py"), (sid, "notes.md")} <= asked
    assert all(Path(r["path"]).is_absolute() for r in editor.reads)
    posts = model.posts
    with pytest.raises(RpcError) as caught:
        await within(client.turn(sid, "x", attachments=[{"type": "file", "path": "locked.py"}]))
    assert caught.value.kind == "invalid_attachment"
    assert "the editor could not read" in caught.value.message
    assert "the buffer is being reloaded" in caught.value.message
    assert model.posts == posts
    assert (await within(client.turn(sid, "again")))["turnId"] == 2  # no turn was used


async def test_tools_read_and_write_through_the_editor(
    spawn: Any, env: dict[str, str], project: Path
) -> None:
    permissions = Path(env["XDG_CONFIG_HOME"]) / "elelem" / "permissions"
    permissions.write_text("execute allow\nwrite allow\n")
    client = await spawn()
    editor = Editor(project)
    editor.serve(client)
    await within(client.initialize(fs={"readTextFile": True, "writeTextFile": True}), 30)
    sid = (await within(client.new_session(cwd=str(project)), 30))["sessionId"]
    events: list[dict[str, Any]] = []
    await within(client.turn(sid, '!tool read {"path": "app.py"}', events.append), 30)
    (read,) = [e["params"] for e in events if e["method"] == "event/result"]
    assert read["ok"] is True and "not saved yet" in json.dumps(read["result"])
    events.clear()
    call = json.dumps({"path": "out.py", "content": "X = 2\n"})
    await within(client.turn(sid, f"!tool write {call}", events.append), 30)
    (wrote,) = [e["params"] for e in events if e["method"] == "event/result"]
    assert wrote["ok"] is True, wrote
    assert editor.writes == [
        {"sessionId": sid, "path": str(project / "out.py"), "content": "X = 2\n"}
    ]
    assert not (project / "out.py").exists()  # the editor saves it when the user does


async def test_a_client_that_offers_no_files_keeps_the_disk(
    spawn: Any, env: dict[str, str], project: Path
) -> None:
    client = await spawn()
    editor = Editor(project)
    editor.serve(client)
    await within(client.initialize(), 30)
    sid = (await within(client.new_session(cwd=str(project)), 30))["sessionId"]
    events: list[dict[str, Any]] = []
    await within(client.turn(sid, '!tool read {"path": "app.py"}', events.append), 30)
    (read,) = [e["params"] for e in events if e["method"] == "event/result"]
    assert "return 0" in json.dumps(read["result"]) and editor.reads == []
    with pytest.raises(RpcError) as caught:
        await within(client.initialize(fs={"readTextFile": "yes"}), 30)
    assert caught.value.data["errors"] == ["capabilities.fs.readTextFile: expected a boolean"]


async def test_files_and_fs_together_read_through_files_and_write_the_rest_through_fs(
    spawn: Any, env: dict[str, str], project: Path
) -> None:
    """Both declared (protocol.md, "`files` or `fs`"): `files/read` serves the reads and
    `fs/read_text_file` is never asked; a write to a file the editor has not open goes
    to `fs/write_text_file`, not the disk."""
    permissions = Path(env["XDG_CONFIG_HOME"]) / "elelem" / "permissions"
    permissions.write_text("write allow\n")
    client = await spawn()
    editor = Editor(project)
    editor.serve(client)
    documents = {str(project / "app.py"): UNSAVED}
    asked: list[str] = []

    def files_read(params: dict[str, Any]) -> dict[str, Any] | None:
        asked.append(params["path"])
        text = documents.get(params["path"])
        return None if text is None else {"text": text, "version": 7}

    client.handlers["files/read"] = files_read
    both = {"files": {"read": True, "apply": True}}
    await within(client.initialize(fs={"readTextFile": True, "writeTextFile": True}, **both))
    sid = (await within(client.new_session(cwd=str(project)), 30))["sessionId"]
    events: list[dict[str, Any]] = []
    await within(client.turn(sid, '!tool read {"path": "app.py"}', events.append), 30)
    (read,) = [e["params"] for e in events if e["method"] == "event/result"]
    assert read["ok"] is True and "not saved yet" in json.dumps(read["result"])
    events.clear()
    call = json.dumps({"path": "out.py", "content": "X = 2\n"})
    await within(client.turn(sid, f"!tool write {call}", events.append), 30)
    (wrote,) = [e["params"] for e in events if e["method"] == "event/result"]
    assert wrote["ok"] is True, wrote
    assert editor.reads == []  # files/read answered every read
    assert str(project / "out.py") in asked
    assert editor.writes == [
        {"sessionId": sid, "path": str(project / "out.py"), "content": "X = 2\n"}
    ]
    assert not (project / "out.py").exists()
