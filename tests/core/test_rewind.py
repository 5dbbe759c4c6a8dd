"""The core's rewind (rewind.py) with the built-in checkpoints plugin and a real
checkpoint engine: the hostile cases first (docs/checkpoints.md, "Rewind")."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from support.checkpointing import allow

from elelem_daemon.base.errors import NoCheckpoint, OutsideChanges, SessionBusy, UnknownTurn
from elelem_daemon.checkpoints import close_all
from elelem_daemon.checkpoints.refs import START, ref
from elelem_daemon.control.rewind import rewind, turns
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import Session, resume, start
from elelem_daemon.store.recorder import history
from elelem_daemon.store.store import Store


@pytest.fixture(autouse=True)
def allowed(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allow(isolated_home, monkeypatch, "execute allow\nwrite allow\nedit allow\n")


@pytest.fixture(autouse=True)
async def closed():
    yield
    await close_all()


@pytest.fixture(scope="module")
def registry():
    return core_registry(entry_points=False)


def opened(registry: Any, cwd: Path, store: Store | None = None) -> Session:
    return start(registry, "stub", cwd=cwd, plugin_files=False, store=store)


def tool(name: str, **arguments: Any) -> str:
    return f"!tool {name} {json.dumps(arguments)}"


async def wrote(session: Session, path: str, content: str) -> int:
    result = await session.turn(tool("write", path=path, content=content))
    assert result.reply == "done.", result
    return session.turns


async def quiet(session: Session) -> Any:
    """The session's engine with no gc under way (a gc packs the refs a test plants)."""
    engine = session.checkpoints.engine
    await engine._stop_upkeep()
    return engine


async def test_a_turn_the_conversation_does_not_hold_is_refused(registry, workdir) -> None:
    session = opened(registry, workdir)
    first = await wrote(session, "x.txt", "x")
    for bad in (first + 1, 0, -3, True, "1", None):
        with pytest.raises(UnknownTurn) as caught:
            await rewind(session, bad)  # type: ignore[arg-type]
        assert caught.value.data == {"turnId": bad}
    assert (workdir / "x.txt").read_text() == "x" and len(session.conversation) == 2


async def test_a_rewind_under_a_running_turn_is_refused_in_every_session_of_the_folder(
    registry, workdir
) -> None:
    session, other = opened(registry, workdir), opened(registry, workdir)
    first = await wrote(session, "x.txt", "x")
    theirs = await wrote(other, "y.txt", "y")
    running = asyncio.ensure_future(session.turn(tool("execute", command="sleep 30")))
    for _ in range(500):
        if session.turn_id is not None and session.checkpoints.running() is None:
            break
        await asyncio.sleep(0.01)
    with pytest.raises(SessionBusy) as caught:
        await rewind(session, first)
    assert caught.value.data == {"sessionId": session.id}
    with pytest.raises(SessionBusy) as caught:
        await rewind(other, theirs, dry_run=True)
    assert caught.value.data == {"sessionId": session.id}
    running.cancel()
    await asyncio.wait([running], timeout=10)
    assert running.done() and session.turn_id is None, session.checkpoints.engine.turns._turns
    assert (workdir / "x.txt").exists() and (workdir / "y.txt").exists()
    done = await rewind(other, theirs)
    assert done.files is not None and done.files["deleted"] == ["y.txt"]


async def test_a_checkpoint_ref_replaced_by_a_symlink_to_another_is_refused(
    registry, workdir
) -> None:
    session = opened(registry, workdir)
    first = await wrote(session, "a.txt", "one")
    second = await wrote(session, "a.txt", "two")
    engine = await quiet(session)
    loose = engine.folder / ref(START, session.id, first)
    loose.parent.mkdir(parents=True, exist_ok=True)
    loose.unlink(missing_ok=True)
    loose.symlink_to(str(second))  # a symbolic ref to turn 2's checkpoint
    with pytest.raises(NoCheckpoint) as caught:
        await rewind(session, first)
    assert caught.value.data["reason"] in ("tampered", "missing")
    commit = (engine.folder / "HEAD").read_text()  # where the last snapshot points
    moved = await engine._existing()
    loose.unlink()
    loose.write_text((await moved.resolve(ref(START, session.id, second))) + "\n")
    with pytest.raises(NoCheckpoint) as caught:  # a ref moved to another turn's commit
        await rewind(session, first)
    assert caught.value.data["reason"] == "tampered" and commit
    assert (workdir / "a.txt").read_text() == "two"
    assert len(session.conversation) == 4  # the conversation stays too


async def test_a_broken_checkpoint_ref_is_named_not_skipped(registry, workdir) -> None:
    session = opened(registry, workdir)
    first = await wrote(session, "a.txt", "one")
    await wrote(session, "b.txt", "two")
    engine = await quiet(session)
    loose = engine.folder / ref(START, session.id, first)
    loose.parent.mkdir(parents=True, exist_ok=True)
    loose.unlink(missing_ok=True)
    loose.write_text("not a commit\n")
    listed = {t["turnId"]: t["checkpoint"] for t in await turns(session)}
    assert listed[first] == "lost"
    with pytest.raises(NoCheckpoint) as caught:  # not turn 2's checkpoint instead
        await rewind(session, first)
    assert caught.value.data["reason"] == "missing" and str(first) in str(caught.value)
    assert (workdir / "a.txt").read_text() == "one" and (workdir / "b.txt").exists()
    done = await rewind(session, first, files=False)  # the conversation alone still goes
    assert done.dropped == [first, first + 1] and len(session.conversation) == 0


async def test_planted_symlinks_in_the_checkpoint_folder_lead_nowhere(
    registry, workdir, tmp_path
) -> None:
    session = opened(registry, workdir)
    first = await wrote(session, "a.txt", "one")
    engine = await quiet(session)
    victim = tmp_path / "victim"
    marker = engine.turns.lock_file
    marker.unlink(missing_ok=True)
    marker.symlink_to(victim)  # the running-turns marker
    (engine.folder / "pruned").symlink_to(tmp_path / "victim-note")
    await wrote(session, "b.txt", "two")
    assert not victim.exists() and not (tmp_path / "victim-note").exists()
    done = await rewind(session, first)
    assert done.files is not None and sorted(done.files["deleted"]) == ["a.txt", "b.txt"]


async def test_the_users_own_edit_since_is_named_and_not_clobbered(registry, workdir) -> None:
    (workdir / "a.txt").write_text("one\n")
    session = opened(registry, workdir)
    first = (await session.turn(tool("edit", path="a.txt", old="one", new="two")), session.turns)[1]
    (workdir / "a.txt").write_text("mine\n")
    with pytest.raises(OutsideChanges) as caught:
        await rewind(session, first)
    assert caught.value.data["files"]["outside"] == ["a.txt"]
    assert (workdir / "a.txt").read_text() == "mine\n" and len(session.conversation) == 2
    done = await rewind(session, first, force=True)
    assert (workdir / "a.txt").read_text() == "one\n" and done.dropped == [first]


async def test_a_rewind_undoes_a_clear_and_the_store_agrees(registry, workdir) -> None:
    store = Store()
    session = opened(registry, workdir, store)
    await session.turn("!echo one")
    second = (await session.turn("!echo two"), session.turns)[1]
    await session.command("/clear")
    await session.turn("!echo three")
    done = await rewind(session, second)
    assert done.dropped == [second, second + 1]
    assert [m["content"] for m in session.conversation] == ["!echo one", "one"]
    await session.close()
    again = resume(registry, store=store, stored=store.load(session.id), plugin_files=False)
    assert [m["content"] for m in again.conversation] == ["!echo one", "one"]
    assert (await again.turn("!echo four")).reply == "four" and again.turns > second + 1
    await again.close()


async def test_a_rewind_drops_its_turns_tool_calls_from_the_redrawn_history(
    registry, workdir
) -> None:
    store = Store()
    session = opened(registry, workdir, store)
    (workdir / "notes.txt").write_text("kept\n")
    await session.turn(tool("read", path="notes.txt"))
    second = (await session.turn(tool("read", path="missing.txt")), session.turns)[1]
    await session.command("/clear")
    await session.turn("!echo three")
    await rewind(session, second, files=False)
    kept = [(e["type"], e.get("content") or e.get("name")) for e in history(session)]
    assert kept == [
        ("message", tool("read", path="notes.txt")),
        ("tool", "read"),
        ("message", "done."),
    ]
    await session.close()
    stored = store.load(session.id)
    assert stored.shown() == history(session)  # the file folds to the same
    again = resume(registry, store=store, stored=stored, plugin_files=False)
    first = min(again.conversation.marks)
    await rewind(again, first, files=False)  # and a reloaded session rewinds it too
    assert history(again) == [] and len(again.conversation) == 0
    await again.close()


async def test_hand_edited_turn_records_are_skipped(registry, workdir, caplog) -> None:
    store = Store()
    session = opened(registry, workdir, store)
    await session.turn("!echo one")
    await session.close()
    path = store.path(session.id)
    with path.open("a") as file:
        for record in (
            {"type": "rewind", "turn": 99, "at": "x"},
            {"type": "turn", "turn": 0, "at": "x"},
            {"type": "turn", "turn": "7"},
            {"type": "rewind"},
        ):
            file.write(json.dumps(record) + "\n")
    with caplog.at_level(logging.WARNING):
        stored = store.load(session.id)
    assert [m["content"] for m in stored.messages] == ["!echo one", "one"]
    assert sorted(stored.conversation.marks) == [1]
    assert sum("record of turn" in r.getMessage() for r in caplog.records) == 4


async def test_a_turn_whose_checkpoint_retention_pruned_is_refused(
    registry, workdir, monkeypatch
) -> None:
    monkeypatch.setenv("ELELEM_CHECKPOINTS_KEEP", "1")
    session = opened(registry, workdir)
    first = await wrote(session, "a.txt", "one")
    second = await wrote(session, "b.txt", "two")
    engine = await quiet(session)
    await engine.upkeep(prune=True, gc=False)  # what runs every few checkpoints
    with pytest.raises(NoCheckpoint) as caught:  # turn 2's checkpoint would leave a.txt
        await rewind(session, first)
    assert caught.value.data["reason"] == "pruned" and (workdir / "a.txt").exists()
    done = await rewind(session, second)  # the one kept still works
    assert done.files is not None and done.files["deleted"] == ["b.txt"]


def test_the_dropped_turns_are_counted_in_good_grammar() -> None:
    from elelem_daemon.control.rewind import Rewound
    from elelem_daemon.control.told import describe

    assert describe(Rewound(1, False, None, [1]))[-1] == (
        "  1 turn was dropped from the conversation"
    )
    assert describe(Rewound(1, False, None, [1, 2]))[-1].endswith(
        "2 turns were dropped from the conversation"
    )
    assert describe(Rewound(1, True, None, [1]))[-1].endswith(
        "1 turn would be dropped from the conversation"
    )
