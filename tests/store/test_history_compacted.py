"""A compaction hides nothing from the user (store/history.py): the transcript keeps the
turns before it, with a `compacted` marker, live and read back; `/clear`, rewinds and
edits keep their meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start
from elelem_daemon.store import pages
from elelem_daemon.store.recorder import history
from elelem_daemon.store.store import Store


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("ELELEM_STATE_DIR", raising=False)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path


def texts(entries: list[dict]) -> list[str]:
    return [e["content"] if e["type"] == "message" else f"[{e['type']}]" for e in entries]


def compact(session, summary: str) -> None:
    session.conversation.clear(compacted=True)
    session.conversation.add("user", f"Context: {summary}")


async def test_the_transcript_keeps_what_a_compaction_took_from_the_model():
    store = Store()
    session = start(core_registry(entry_points=False), plugin_files=False, store=store)
    await session.turn("!echo one")
    await session.turn("!echo two")
    compact(session, "one and two")
    await session.turn("!echo three")
    whole = ["!echo one", "one", "!echo two", "two", "[compacted]", "Context: one and two"]
    whole += ["!echo three", "three"]
    assert texts(history(session)) == whole
    assert [m["content"] for m in session.conversation] == whole[5:]  # the model's
    await session.close()

    stored = store.load(session.id)
    assert texts(stored.shown()) == whole  # read back the same
    assert [m["content"] for m in stored.messages] == whole[5:]
    assert {"type": "compacted"} in stored.shown()


async def test_rewinds_edits_and_clears_keep_their_meaning_after_a_compaction():
    store = Store()
    session = start(core_registry(entry_points=False), plugin_files=False, store=store)
    await session.turn("!echo one")
    await session.turn("!echo two")
    compact(session, "one and two")
    await session.turn("!echo three")
    session.conversation.edit(0, "Context: edited")  # message 0 is the model's: the summary
    assert texts(history(session))[:6] == [
        "!echo one",
        "one",
        "!echo two",
        "two",
        "[compacted]",
        "Context: edited",
    ]
    session.conversation.rewind(3)  # back before turn 3: the summary stays
    assert texts(history(session)) == [
        "!echo one",
        "one",
        "!echo two",
        "two",
        "[compacted]",
        "Context: edited",
    ]
    session.conversation.rewind(2)  # back before turn 2: before the compaction too
    assert texts(history(session)) == ["!echo one", "one"]
    assert [m["content"] for m in session.conversation] == ["!echo one", "one"]
    await session.turn("!echo four")
    session.conversation.clear()  # /clear empties what is redrawn, as before
    assert history(session) == []
    await session.close()
    assert store.load(session.id).shown() == []
    # a rewind to before the clear brings back turn 1, as it always did
    again = store.load(session.id)
    again.conversation.rewind(4)
    again.history.rewind(4)
    assert texts([pages.shown(e) for e in again.history.entries]) == ["!echo one", "one"]


def test_pages_cover_the_history_newest_first_and_a_cursor_goes_stale():
    entries = [
        {"type": "message", "role": "user", "content": f"{n} " + "x" * 1000} for n in range(900)
    ]
    newest, cursor = pages.page(entries, 0)
    assert newest[-1]["content"].startswith("899 ") and cursor is not None
    got = list(newest)
    while cursor is not None:
        older, cursor = pages.page(entries, 0, cursor)
        assert 0 < len(older) <= pages.PAGE_ENTRIES
        assert sum(pages.weight(e) for e in older) <= pages.PAGE_WEIGHT
        got = older + got
    assert [int(e["content"].split()[0]) for e in got] == list(range(900))
    one_big = [{"type": "message", "role": "user", "content": "y" * (pages.PAGE_WEIGHT * 2)}]
    assert pages.page(one_big, 0) == (one_big, None)  # at least one entry, however large
    with pytest.raises(Exception, match="changed"):
        pages.page(entries, 1, "0.10")
