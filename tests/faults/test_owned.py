"""elelem's own files are never opened through a link (issue 13, item 2): a symlink,
hard link or FIFO planted in the session store (`<id>.jsonl`) or in a folder's
checkpoints cannot make the daemon write, truncate or append to another file, nor
hang it. Against the real daemon over stdio; the checkpoints (not yet wired into a
session) through their engine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.checkpoints import Checkpoints, Settings, close_all
from elelem_daemon.checkpoints.shadow import folder_of
from elelem_daemon.jsonrpc.client import Client
from elelem_daemon.jsonrpc.errors import RpcError

from .conftest import within

pytestmark = pytest.mark.e2e

PRECIOUS = b"export PATH=/usr/bin  # no newline at the end"


def sessions(env: dict[str, str]) -> Path:
    folder = Path(env["XDG_STATE_HOME"]) / "elelem" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def stored_session(client: Client) -> str:
    session = (await within(client.new_session()))["sessionId"]
    await within(client.turn(session, "!echo hi"))
    await within(client.close_session(session))
    return session


@pytest.fixture
def precious(tmp_path: Path) -> Path:
    path = tmp_path / "bashrc"
    path.write_bytes(PRECIOUS)
    return path


async def test_deleting_a_symlinked_session_leaves_its_target_alone(
    client: Client, env: dict[str, str], precious: Path
) -> None:
    link = sessions(env) / "planted.jsonl"
    link.symlink_to(precious)
    listed = await within(client.list_sessions())
    assert all(s["sessionId"] != "planted" for s in listed)
    with pytest.raises(RpcError) as load:
        await within(client.load_session("planted"))
    assert load.value.data["kind"] == "unknown_session" and "symlink" in load.value.message
    await within(client.delete_session("planted"))
    assert precious.read_bytes() == PRECIOUS  # not truncated, not appended to
    assert not os.path.lexists(link)  # the planted name is gone


async def test_a_hard_linked_session_file_is_never_written(
    client: Client, env: dict[str, str], precious: Path
) -> None:
    session = await stored_session(client)
    path = sessions(env) / f"{session}.jsonl"
    path.unlink()
    os.link(precious, path)  # the same file, under the session's name
    with pytest.raises(RpcError) as load:
        await within(client.load_session(session))
    assert "hard links" in load.value.message
    await within(client.delete_session(session))
    assert precious.read_bytes() == PRECIOUS


async def test_a_fifo_in_the_store_hangs_nothing(client: Client, env: dict[str, str]) -> None:
    os.mkfifo(sessions(env) / "fifo.jsonl")
    session = await stored_session(client)
    listed = await within(client.list_sessions(), 5)  # no read blocks on the FIFO
    assert [s["sessionId"] for s in listed if s.get("stored")] == [session]
    with pytest.raises(RpcError):
        await within(client.load_session("fifo"), 5)
    await within(client.delete_session("fifo"), 5)
    assert not (sessions(env) / "fifo.jsonl").exists()


async def test_a_symlink_to_the_session_file_of_a_new_session_is_not_followed(
    spawn: Any, env: dict[str, str], precious: Path
) -> None:
    """A link planted under the name a session will get: the session is not saved
    (the user is told) and the target is untouched."""
    client = await spawn()
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    (sessions(env) / f"{session}.jsonl").symlink_to(precious)
    events: list[Any] = []
    answer = await within(client.turn(session, "!echo hi", on_event=events.append))
    assert answer["reply"] == "hi"
    said = [e["params"].get("text", "") for e in events if e["method"] == "event/say"]
    assert any("no longer saved" in text for text in said), said
    assert precious.read_bytes() == PRECIOUS


# -- checkpoints ------------------------------------------------------------------------
@pytest.fixture
async def checkpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    state = tmp_path / "state"
    monkeypatch.setenv("ELELEM_STATE_DIR", str(state))
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    yield project, Settings.from_env()
    await close_all()


@pytest.mark.parametrize("name", ["config", "info/exclude", "info/attributes"])
async def test_a_link_planted_in_a_checkpoint_folder_is_not_written_through(
    checkpoints: Any, precious: Path, name: str
) -> None:
    project, settings = checkpoints
    folder = folder_of(settings.root, project.resolve())
    (folder / "info").mkdir(parents=True)
    os.chmod(folder, 0o700)
    (folder / "cwd").write_text(f"{project.resolve()}\n")
    (folder / name).symlink_to(precious)
    await Checkpoints(project, settings).begin("s", 1)
    assert precious.read_bytes() == PRECIOUS


async def test_a_dangling_link_planted_as_the_folder_marker_creates_nothing(
    checkpoints: Any, tmp_path: Path
) -> None:
    project, settings = checkpoints
    folder = folder_of(settings.root, project.resolve())
    folder.mkdir(parents=True)
    os.chmod(folder, 0o700)
    planted = tmp_path / "profile.d" / "evil.sh"
    planted.parent.mkdir()
    (folder / "cwd").symlink_to(planted)
    await Checkpoints(project, settings).begin("s", 1)
    assert not planted.exists()


async def test_a_checkpoint_lock_that_is_a_link_is_refused(
    checkpoints: Any, precious: Path
) -> None:
    project, settings = checkpoints
    folder = folder_of(settings.root, project.resolve())
    folder.parent.mkdir(parents=True)
    folder.with_suffix(".lock").symlink_to(precious)
    saved = await Checkpoints(project, settings).begin("s", 1)
    assert precious.read_bytes() == PRECIOUS
    assert not saved.ok or saved.kind == "copy"
