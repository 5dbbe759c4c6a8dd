"""The core with a fake editor (an `EditorFiles` whose writes land in its buffers, not on
the disk): what `changes.land` lands through the editor reaches the turn's end
checkpoint (`Seen.applied`, the built-in plugin's `turn_end`), and a rewind names it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.checkpointing import allow

from elelem_daemon.checkpoints import close_all
from elelem_daemon.control.rewind import rewind, turns
from elelem_daemon.edits.filesystem import EditorFiles, FileState
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import Session, start


@pytest.fixture(autouse=True)
def allowed(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allow(isolated_home, monkeypatch, "write allow\nedit allow\n")


@pytest.fixture(autouse=True)
async def closed():
    yield
    await close_all()


class Buffers(EditorFiles):
    """An editor holding some files open: reads see them, writes land in them."""

    def __init__(self, texts: dict[Path, str]) -> None:
        super().__init__(self.serve, self.apply)
        self.texts = texts

    async def serve(self, path: Path) -> FileState | None:
        text = self.texts.get(path)
        return None if text is None else FileState.of(text, len(text), editor=True)

    async def apply(self, path: Path, text: str) -> None:
        if path in self.texts:
            self.texts[path] = text
        else:  # not open: the disk
            path.write_text(text)


def opened(cwd: Path, texts: dict[Path, str]) -> tuple[Session, Buffers]:
    session = start(core_registry(entry_points=False), "stub", cwd=cwd, plugin_files=False)
    session.files = editor = Buffers(texts)
    return session, editor


def tool(name: str, **arguments: Any) -> str:
    return f"!tool {name} {json.dumps(arguments)}"


async def test_a_change_landed_in_a_buffer_is_the_turns_and_rewind_names_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    (tmp_path / "disk.txt").write_text("disk\n")
    session, editor = opened(tmp_path, {tmp_path / "a.txt": "one\n"})
    await session.turn(tool("edit", path="a.txt", old="one", new="two"))
    await session.turn(tool("write", path="disk.txt", content="written\n"))  # not open
    assert editor.texts[tmp_path / "a.txt"] == "two\n"
    assert (tmp_path / "a.txt").read_text() == "one\n"
    assert session.seen.applied == {}  # the next turn began afresh
    listed = await turns(session)
    assert [t["files"] for t in listed] == [["a.txt"], ["disk.txt"]]
    plan = await rewind(session, listed[0]["turnId"], dry_run=True)
    assert plan.files is not None
    assert plan.files["buffers"] == ["a.txt"] and plan.files["outside"] == []
    assert plan.files["restored"] == ["a.txt", "disk.txt"]
    done = await rewind(session, listed[0]["turnId"])
    assert done.files is not None and done.files["buffers"] == ["a.txt"]
    assert (tmp_path / "disk.txt").read_text() == "disk\n"


async def test_a_change_the_disk_took_is_not_a_buffers(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    session = start(core_registry(entry_points=False), "stub", cwd=tmp_path, plugin_files=False)
    await session.turn(tool("edit", path="a.txt", old="one", new="two"))
    (turn,) = await turns(session)
    plan = await rewind(session, turn["turnId"], dry_run=True)
    assert plan.files is not None and plan.files["buffers"] == []
    assert turn["files"] == ["a.txt"]
