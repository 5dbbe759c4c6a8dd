"""Context editing (issue 20, elelem backlog 021): `/context` lists the kept messages
with approximate token counts; `/context delete` takes lists and ranges; `/context
edit` goes through the Input's editor; the system prompt cannot be edited; bad input
is one clear line and loses nothing; the store records each edit, so a resumed session
shows the edited conversation and can still rewind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elelem_daemon.conversation import Conversation
from elelem_daemon.io import NullInput
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import resume, start
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


class Editing(NullInput):
    """An Input whose editor saves what the test says (None: closed unsaved)."""

    def __init__(self, saves: list[str | None]) -> None:
        super().__init__()
        self.saves = saves
        self.shown: list[tuple[str, str]] = []

    async def edit(self, text: str, name: str = "text") -> str | None:
        self.shown.append((text, name))
        return self.saves.pop(0)


async def three_turns(store: Store | None = None, input=None):
    session = start(core_registry(entry_points=False), plugin_files=False, store=store, input=input)
    for word in ("one", "two", "three"):
        await session.turn(f"!echo {word}")
    return session


def kept(session) -> list[str]:
    return [m["content"] for m in session.conversation]


async def test_context_lists_each_message_with_its_approximate_tokens() -> None:
    session = await three_turns()
    lines = (await session.command("/context")).output.splitlines()
    assert lines[1] == "  2. user: !echo one (~3 tokens)"  # 9 characters, about 4 a token
    assert lines[2] == "  3. assistant: one (~1 tokens)"
    assert lines[0].startswith("  1. system: You are a terminal coding agent.")
    await session.close()


@pytest.mark.parametrize(
    ("spec", "left"),
    [
        ("3,4", ["!echo one", "two", "!echo three", "three"]),
        ("3-5", ["!echo one", "!echo three", "three"]),
        ("2, 5-7", ["one", "!echo two"]),
        ("4,3,3-4", ["!echo one", "two", "!echo three", "three"]),
    ],
)
async def test_delete_takes_lists_and_ranges(spec: str, left: list[str]) -> None:
    session = await three_turns()
    result = await session.command(f"/context delete {spec}")
    assert result.output.startswith("  → deleted message")
    assert kept(session) == left
    await session.close()


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("1", "message 1 is the system prompt: it cannot be edited"),
        ("1-3", "message 1 is the system prompt"),
        ("8", "no message 8: the messages are 2 to 7"),
        ("0", "no message 0"),
        ("3-99", "no message 99"),
        ("5-3", "a range goes up: 5-3"),
        ("three", "not a message number or range: 'three'"),
        ("3,,4", "not a message number or range: ''"),
        ("-3", "not a message number or range"),
        ("", "which messages?"),
        ("3" * 2000, "the list is over 1000 characters"),
        ("99999999999999", "not a message number or range"),
    ],
)
async def test_bad_deletes_say_why_and_lose_nothing(spec: str, says: str) -> None:
    session = await three_turns()
    before = kept(session)
    result = await session.command(f"/context delete {spec}")
    assert result.output.startswith("error: ") and says in result.output
    assert kept(session) == before
    await session.close()


async def test_edit_goes_through_the_editor_and_an_empty_save_deletes() -> None:
    input = Editing(["two, edited", "   \n", None, "!echo one"])
    session = await three_turns(input=input)
    assert (await session.command("/context edit 5")).output == "  → edited message 5"
    assert input.shown == [("two", "message-5")]
    assert kept(session)[3] == "two, edited"
    assert (await session.command("/context edit 4")).output == (
        "  → deleted message 4 (the edit was empty)"
    )
    assert kept(session) == ["!echo one", "one", "two, edited", "!echo three", "three"]
    assert "unchanged" in (await session.command("/context edit 2")).output  # not saved
    assert (await session.command("/context edit 2")).output == "  → message 2 unchanged"
    for bad, says in [("1", "system prompt"), ("9", "no message 9"), ("x", "which message?")]:
        result = await session.command(f"/context edit {bad}")
        assert result.output.startswith("error: ") and says in result.output
    assert len(kept(session)) == 5
    await session.close()


async def test_without_an_editor_edit_says_how_the_editor_clients_do_it() -> None:
    session = await three_turns()
    result = await session.command("/context edit 3")
    assert "session/editContext" in result.output and kept(session)[1] == "one"
    await session.close()


async def test_the_store_records_edits_and_a_resume_shows_them() -> None:
    store = Store()
    session = await three_turns(store, Editing(["ONE"]))
    await session.command("/context delete 4-5")
    await session.command("/context edit 3")
    edited = kept(session)
    assert edited == ["!echo one", "ONE", "!echo three", "three"]
    path = store.path(session.id)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    edits = [r for r in records if r["type"] == "edit"]
    assert [(e["index"], e["content"]) for e in edits] == [(3, None), (2, None), (1, "ONE")]
    await session.close()
    stored = store.load(session.id)
    assert [m["content"] for m in stored.messages] == edited
    assert not stored.interrupted
    again = resume(core_registry(entry_points=False), store, stored, plugin_files=False)
    assert kept(again) == edited
    shown = [e["content"] for e in history(again) if e["type"] == "message"]
    assert shown == edited
    dropped = again.conversation.rewind(3)  # turns still rewind after an edit
    assert dropped == [3] and kept(again) == ["!echo one", "ONE"]
    await again.close()


async def test_deleting_the_last_reply_is_no_interrupted_turn() -> None:
    store = Store()
    session = await three_turns(store)
    await session.command("/context delete 7")
    await session.close()
    stored = store.load(session.id)
    assert not stored.interrupted
    again = resume(core_registry(entry_points=False), store, stored, plugin_files=False)
    assert kept(again)[-1] == "!echo three"  # no [interrupted] reply is made up
    await again.close()


def test_conversation_edit_moves_the_marks_after_it() -> None:
    conversation = Conversation()
    for turn, word in enumerate(("a", "b", "c"), 1):
        conversation.begin_turn(turn)
        conversation.add("user", word)
        conversation.add("assistant", word.upper())
    heard = []
    conversation.listeners.append(lambda event, data: heard.append((event, data)))
    conversation.edit(1, None)
    assert heard == [("edit", {"index": 1, "content": None})]
    assert conversation.prompt_of(2)["content"] == "b"
    assert conversation.prompt_of(3)["content"] == "c"
    with pytest.raises(IndexError):
        conversation.edit(5, "x")
    with pytest.raises(IndexError):
        conversation.edit(-1, None)
    conversation.rewind(3)
    assert [m["content"] for m in conversation] == ["a", "b", "B"]
