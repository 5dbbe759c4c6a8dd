"""What a stored session holds for redrawing: tool records between the messages (bounded,
secrets out), a compacted session that is not "interrupted", version 1 files, and a
session stored when it is created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elelem_daemon.plugins import core_registry
from elelem_daemon.session import resume, start
from elelem_daemon.store import records
from elelem_daemon.store.recorder import INTERRUPTED, history
from elelem_daemon.store.store import Store


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("ELELEM_STATE_DIR", raising=False)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    (tmp_path / "project" / "notes.txt").write_text("line one\n")
    return tmp_path


@pytest.fixture(scope="module")
def registry():
    return core_registry(entry_points=False)


def new(registry, store, **kw):
    return start(registry, plugin_files=False, store=store, **kw)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_tool_calls_are_stored_between_the_messages_for_redrawing(registry) -> None:
    store = Store()
    session = new(registry, store)
    await session.turn('!tool read {"path": "notes.txt"}')
    await session.turn('!tool read {"path": "missing.txt"}')
    await session.close()
    kinds = [(r["type"], r.get("role") or r.get("name")) for r in lines(store.path(session.id))]
    assert kinds == [
        ("session", None),
        ("turn", None),
        ("message", "user"),
        ("tool", "read"),
        ("message", "assistant"),
        ("turn", None),
        ("message", "user"),
        ("tool", "read"),
        ("message", "assistant"),
    ]
    stored = store.load(session.id)
    assert [m["role"] for m in stored.messages] == ["user", "assistant"] * 2  # the model's view
    shown = stored.shown()
    assert shown[1] == {
        "type": "tool",
        "id": "stub-1",
        "name": "read",
        "arguments": {"path": "notes.txt"},
        "ok": True,
        "result": {"content": "line one\n", "path": "notes.txt"},
    }
    assert shown[4]["ok"] is False and shown[4]["result"]["error"] == "not found"
    again = resume(registry, store, stored, plugin_files=False)
    assert history(again) == shown  # what the faces redraw
    await again.turn("!echo more")
    assert history(again)[-2:] == [
        {"type": "message", "role": "user", "content": "!echo more"},
        {"type": "message", "role": "assistant", "content": "more"},
    ]
    await again.close()


async def test_a_clear_empties_the_redrawn_history_too(registry) -> None:
    store = Store()
    session = new(registry, store)
    await session.turn('!tool read {"path": "notes.txt"}')
    await session.command("/clear")
    await session.turn("!echo after")
    assert [e["type"] for e in history(session)] == ["message", "message"]
    await session.close()
    assert [e["content"] for e in store.load(session.id).shown()] == ["!echo after", "after"]


def test_a_tool_record_is_bounded_and_keeps_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-very-secret-value-123")
    call = {
        "id": "c1",
        "name": "execute",
        "arguments": {"command": "echo tok-very-secret-value-123 " + "a" * 10_000},
    }
    payload = {
        "content": "key sk-abcdefghijklmnopqrstuv and " + "b" * 50_000,
        "diff": "+" * 30_000,
        "nested": [[[[[[[[[["deep"]]]]]]]]]],
        "many": list(range(1000)),
    }
    record = records.tool(call, True, payload)
    text = json.dumps(record)
    assert "tok-very-secret-value-123" not in text and "sk-abcdefghijklmnop" not in text
    assert text.count(records.REDACTED) == 2
    assert len(record["arguments"]["command"]) < records.TEXT_CAP + 100
    assert len(record["result"]["content"]) < records.TEXT_CAP + 100
    assert records.TEXT_CAP < len(record["result"]["diff"]) < records.DIFF_CAP + 100
    assert len(record["result"]["many"]) == records.ITEMS_CAP
    assert "nested too deep" in text
    assert len(records.encode(record)) <= records.RECORD_CAP


def test_a_record_too_large_even_when_cut_keeps_only_the_outcome() -> None:
    payload = {f"k{i}": "x" * 3000 for i in range(150)}  # ~450 KB after every cap
    record = records.tool({"id": "c", "name": "glob", "arguments": {}}, False, payload)
    assert record["result"] == {"truncated": True} and record["ok"] is False
    failed = records.tool({"id": "c", "name": "glob"}, False, {"error": "boom", **payload})
    assert failed["result"] == {"error": "boom", "truncated": True}


async def test_a_compacted_session_reopens_without_a_fake_reply(registry) -> None:
    store = Store()
    session = new(registry, store)
    await session.turn("!echo one")
    result = await session.command("/compact")
    assert result.output == "  → compacted: 2 messages became 1"
    assert session.conversation.last["content"].startswith("Context: ")
    await session.close()
    path = store.path(session.id)
    assert lines(path)[-1]["prompt"] is False  # no reply is due to the summary
    # the summary turn ran aside: neither its messages nor its tool call (the stub's
    # default answer calls a tool) are stored
    kinds = [r["type"] for r in lines(path)]
    assert kinds == ["session", "turn", "message", "message", "clear", "message"]
    stored = store.load(session.id)
    assert stored.interrupted is False
    again = resume(registry, store, stored, plugin_files=False)
    assert again.conversation.last["content"].startswith("Context: ")
    await again.close()
    assert INTERRUPTED not in path.read_text()


def test_a_version_1_file_loads_as_it_is(isolated: Path) -> None:
    store = Store()
    store.root.mkdir(parents=True)
    v1 = [
        {"type": "session", "version": 1, "id": "old1", "cwd": "/x", "provider": "stub",
         "model": "stub", "created": "2026-01-01T00:00:00.000Z", "title": "hello"},
        {"type": "message", "role": "user", "content": "hello", "at": "t"},
        {"type": "message", "role": "assistant", "content": "hi", "at": "t"},
        {"type": "message", "role": "user", "content": "in flight", "at": "t"},
        {"type": "future", "what": "a record a newer elelem wrote"},
    ]  # fmt: skip
    (store.root / "old1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in v1))
    stored = store.load("old1")
    assert [m["content"] for m in stored.messages] == ["hello", "hi", "in flight"]
    assert stored.interrupted is True  # a v1 user message is a prompt
    assert [e["type"] for e in stored.shown()] == ["message"] * 3


async def test_a_session_stored_when_created_is_listed_and_titled_by_its_first_prompt(
    registry,
) -> None:
    store = Store()
    session = new(registry, store, store_now=True)
    path = store.path(session.id)
    (head,) = lines(path)
    assert head["type"] == "session" and head["title"] == ""
    (listed,) = store.list()
    assert listed.id == session.id and listed.title == ""
    await session.turn("!echo first prompt\nsecond line")
    assert store.list()[0].title == "!echo first prompt"
    assert store.load(session.id).title == "!echo first prompt"
    await session.close()
    assert [r["type"] for r in lines(path)] == ["session", "turn", "message", "message"]


def test_a_key_the_face_moved_out_of_the_environment_is_still_kept_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from elelem_daemon.base import keys

    monkeypatch.setitem(keys._store, "ANTHROPIC_API_KEY", "plain-looking-key-0042")
    record = records.tool({"id": "c", "name": "read"}, True, {"content": "plain-looking-key-0042"})
    assert record["result"]["content"] == records.REDACTED
