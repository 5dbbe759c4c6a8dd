"""The session store: append-only JSON Lines, fsync per message, torn tails, listing."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from elelem_daemon.base.errors import SessionLocked, UnknownSession
from elelem_daemon.io import NullOutput
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import resume, start
from elelem_daemon.store.recorder import INTERRUPTED
from elelem_daemon.store.store import Store, sessions_dir


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("ELELEM_STATE_DIR", raising=False)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path


@pytest.fixture(scope="module")
def registry():
    return core_registry(entry_points=False)


def new(registry, store, cwd=None, **kw):
    return start(registry, cwd=cwd, plugin_files=False, store=store, **kw)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_sessions_dir_follows_the_environment(isolated, monkeypatch):
    assert sessions_dir() == isolated / "xdg_state_home" / "elelem" / "sessions"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert sessions_dir() == isolated / "home" / ".local" / "state" / "elelem" / "sessions"
    monkeypatch.setenv("ELELEM_STATE_DIR", str(isolated / "mine"))
    assert sessions_dir() == isolated / "mine" / "sessions"
    assert Store().root == isolated / "mine" / "sessions"


async def test_each_kept_message_is_written_and_fsynced_as_it_is_added(registry, monkeypatch):
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    store = Store()
    session = new(registry, store)
    path = store.path(session.id)
    assert not path.exists()  # nothing kept, nothing stored
    session.conversation.add("user", "first prompt\nsecond line")
    records = lines(path)  # already on disk, read through another handle
    assert [r["type"] for r in records] == ["session", "message"]
    head = records[0]
    assert head["id"] == session.id and head["cwd"] == str(Path.cwd())
    assert (head["provider"], head["model"], head["title"]) == ("stub", "stub", "first prompt")
    assert head["version"] == 2 and head["created"].endswith("Z")
    await session.recorder.writer.synced()
    before = len(synced)
    assert (await session.turn("!echo hi")).reply == "hi"
    await session.recorder.writer.synced()
    assert 1 <= len(synced) - before <= 2  # the prompt's sync, and the reply's (or one for both)
    turn, *kept = lines(path)[2:]
    assert (turn["type"], turn["turn"]) == ("turn", 1) and turn["at"].endswith("Z")
    assert [(r["role"], r["content"]) for r in kept] == [
        ("user", "!echo hi"),
        ("assistant", "hi"),
    ]
    await session.close()


async def test_load_returns_the_kept_messages_clear_and_switch_included(registry):
    store = Store()
    session = new(registry, store)
    await session.turn("!echo one")
    session.conversation.clear()
    await session.turn("!echo two")
    session.switch("stub", "bigger")
    await session.turn("!echo three")
    await session.close()
    stored = store.load(session.id)
    assert [m["content"] for m in stored.messages] == ["!echo two", "two", "!echo three", "three"]
    assert (stored.provider, stored.model, stored.title) == ("stub", "bigger", "!echo one")
    kinds = [r["type"] for r in lines(stored.path)]
    assert kinds.count("clear") == 1 and kinds.count("meta") == 1


async def test_a_torn_last_line_is_ignored_and_cut_before_the_next_append(registry):
    store = Store()
    session = new(registry, store)
    await session.turn("!echo kept")
    await session.close()
    path = store.path(session.id)
    with path.open("ab") as file:
        file.write(b'{"type":"message","role":"user","content":"half wri')
    stored = store.load(session.id)
    assert [m["content"] for m in stored.messages] == ["!echo kept", "kept"]
    again = resume(registry, store, stored, plugin_files=False)
    await again.turn("!echo more")
    await again.close()
    assert all(line.startswith("{") for line in path.read_text().splitlines())
    contents = [m["content"] for m in store.load(session.id).messages]
    assert contents == ["!echo kept", "kept", "!echo more", "more"]


def test_a_corrupt_middle_line_is_skipped_and_a_file_without_metadata_is_not_listed(caplog):
    store = Store()
    store.root.mkdir(parents=True)
    head = {"type": "session", "version": 1, "id": "abc", "cwd": "/x", "provider": "stub"}
    message = {"type": "message", "role": "user", "content": "hi"}
    (store.root / "abc.jsonl").write_text(
        "\n".join([json.dumps(head), "not json", json.dumps(message)]) + "\n"
    )
    (store.root / "torn.jsonl").write_text('{"type":"sess')
    (store.root / "nohead.jsonl").write_text(json.dumps(message) + "\n")
    (store.root / "array.jsonl").write_text("[1, 2]\n")
    assert [m["content"] for m in store.load("abc").messages] == ["hi"]
    assert "line 2 skipped" in caplog.text
    assert [s.id for s in store.list()] == ["abc"]
    with pytest.raises(UnknownSession, match="unreadable"):
        store.load("nohead")


async def test_listing_is_most_recent_first_and_filters_by_cwd(registry, isolated):
    store = Store()
    other = isolated / "other"
    other.mkdir()
    ids = []
    for number, cwd in enumerate([None, other, None]):
        session = new(registry, store, cwd=cwd)
        await session.turn(f"!echo {number}")
        await session.close()
        os.utime(store.path(session.id), (1_000_000 + number, 1_000_000 + number))
        ids.append(session.id)
    assert [s.id for s in store.list()] == ids[::-1]
    assert [s.id for s in store.list(Path.cwd())] == [ids[2], ids[0]]
    assert [s.id for s in store.list(other)] == [ids[1]]
    assert store.latest(other).id == ids[1]
    assert store.latest(isolated) is None
    summary = store.list()[0].summary()
    assert summary["sessionId"] == ids[2] and summary["title"] == "!echo 2"
    assert summary["updatedAt"] == "1970-01-12T13:46:42.000Z" and summary["stored"] is True


async def test_find_delete_and_bad_ids(registry):
    store = Store()
    assert store.list() == []
    session = new(registry, store)
    await session.turn("!echo x")
    await session.close()
    assert store.find(session.id[:6]) == session.id
    assert store.find(session.id) == session.id
    for bad in ("", "../etc/passwd", "a b", "x" * 65):
        with pytest.raises(UnknownSession, match="invalid session id"):
            store.find(bad)
        with pytest.raises(UnknownSession, match="invalid session id"):
            store.load(bad)
    with pytest.raises(UnknownSession, match="no stored session 'zzz'"):
        store.find("zzz")
    twin = store.root / f"{session.id[:6]}twin.jsonl"
    twin.write_text(store.path(session.id).read_text())
    with pytest.raises(UnknownSession, match="ambiguous"):
        store.find(session.id[:6])
    store.delete(session.id)
    assert not store.path(session.id).exists()
    with pytest.raises(UnknownSession, match="no stored session"):
        store.delete(session.id)
    with pytest.raises(UnknownSession, match="no stored session"):
        store.load(session.id)


async def test_a_session_open_in_one_place_cannot_be_resumed_in_another(registry):
    store = Store()
    first = new(registry, store)
    await first.turn("!echo x")
    with pytest.raises(SessionLocked, match="already open"):
        resume(registry, store, store.load(first.id), plugin_files=False)
    with pytest.raises(SessionLocked, match="already open"):
        store.delete(first.id)
    await first.close()
    second = resume(registry, store, store.load(first.id), plugin_files=False)
    assert second.id == first.id and len(second.conversation) == 2
    await second.close()
    store.delete(first.id)
    assert store.list() == []


async def test_resume_uses_the_stored_cwd_provider_and_model_unless_told(registry, isolated):
    store = Store()
    session = new(registry, store, cwd=isolated, model="m1")
    await session.turn("!echo x")
    await session.close()
    again = resume(registry, store, store.load(session.id), plugin_files=False)
    assert (again.cwd, again.provider_name, again.model) == (isolated, "stub", "m1")
    await again.close()
    other = resume(registry, store, store.load(session.id), model="m2", plugin_files=False)
    assert other.model == "m2"
    await other.turn("!echo y")
    await other.close()
    assert store.load(session.id).model == "m2"


class Streamed(NullOutput):
    def __init__(self) -> None:
        self.started = asyncio.Event()

    def saying(self, text: str) -> None:
        self.started.set()


async def test_a_cancelled_turn_keeps_what_the_agent_saved(registry):
    store = Store()
    output = Streamed()
    session = new(registry, store, output=output)
    task = asyncio.create_task(session.turn("!stream 1000 20"))
    await asyncio.wait_for(output.started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await session.close()
    messages = store.load(session.id).messages
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"].startswith("tok0 ")
    assert messages[1]["content"].endswith("[cancelled]")


async def test_a_turn_that_died_with_the_process_reads_as_interrupted(registry):
    store = Store()
    output = Streamed()
    session = new(registry, store, output=output)
    await session.turn("!echo done")
    task = asyncio.create_task(session.turn("!stream 1000 20"))
    await asyncio.wait_for(output.started.wait(), 10)
    session.recorder.close()  # the process dies here: nothing more reaches the file
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await session.close()
    stored = store.load(session.id)
    assert stored.messages[-1] == {"role": "user", "content": "!stream 1000 20"}
    again = resume(registry, store, stored, plugin_files=False)
    assert again.conversation.last == {"role": "assistant", "content": INTERRUPTED}
    await again.close()
    assert store.load(session.id).messages[-1]["content"] == INTERRUPTED


class Said(NullOutput):
    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []

    def say(self, text: str, kind: str = "plain") -> None:
        self.said.append((text, kind))


async def test_a_store_that_cannot_be_written_says_so_once_and_the_turn_goes_on(registry, isolated):
    (isolated / "a-file").write_text("")
    output = Said()
    session = new(registry, Store(isolated / "a-file" / "sessions"), output=output)
    assert (await session.turn("!echo still works")).reply == "still works"
    assert (await session.turn("!echo and again")).reply == "and again"
    errors = [text for text, kind in output.said if kind == "error"]
    assert len(errors) == 1 and errors[0].startswith("this session is no longer saved:")


async def test_without_a_store_nothing_is_written(registry):
    session = start(registry, plugin_files=False)
    await session.turn("!echo x")
    assert not sessions_dir().exists()


async def test_resume_reads_the_file_once_when_nothing_changed_since_it_was_read(
    registry, monkeypatch
):
    store = Store()
    session = new(registry, store)
    await session.turn("!echo x")
    await session.close()
    stored = store.load(session.id)
    assert stored.read_as is not None
    reads: list[str] = []
    real = Store.load
    monkeypatch.setattr(Store, "load", lambda self, i: (reads.append(i), real(self, i))[1])
    again = resume(registry, store, stored, plugin_files=False)
    assert reads == []  # the file under the lock is the one read: not read again
    assert [m["content"] for m in again.conversation] == ["!echo x", "x"]
    await again.close()


async def test_resume_reads_again_what_another_process_wrote_since_it_was_read(registry):
    store = Store()
    session = new(registry, store)
    await session.turn("!echo x")
    await session.close()
    stored = store.load(session.id)  # then someone appends before the lock is taken
    other = resume(registry, store, store.load(session.id), plugin_files=False)
    await other.turn("!echo y")
    await other.close()
    again = resume(registry, store, stored, plugin_files=False)
    assert [m["content"] for m in again.conversation] == ["!echo x", "x", "!echo y", "y"]
    await again.close()


async def test_resume_reads_again_a_file_whose_torn_tail_the_lock_cut(registry):
    store = Store()
    session = new(registry, store)
    await session.turn("!echo x")
    await session.close()
    path = store.path(session.id)
    with path.open("ab") as file:
        file.write(b'{"type":"message","role":"user","content":"half')  # died mid-write
    stored = store.load(session.id)
    again = resume(registry, store, stored, plugin_files=False)  # cuts it: reads anew
    assert [m["content"] for m in again.conversation] == ["!echo x", "x"]
    assert path.read_bytes().endswith(b"\n")
    await again.close()
