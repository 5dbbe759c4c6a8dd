"""Without git, the file tools' writes are copied first (`before_write`) and restored
byte for byte; what `execute` changes is not seen (the documented limit)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from elelem_daemon.checkpoints import Checkpoints, Settings

from .support import listing


@pytest.fixture
def no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin-without-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


async def write(checkpoints: Checkpoints, turn: int, path: Path, data: bytes | None) -> None:
    """What a file tool does: say so, then write (or delete)."""
    assert await checkpoints.before_write("s", turn, path)
    if data is None:
        path.unlink()
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


async def test_the_file_tools_writes_are_restored_without_git(
    no_git: None, project: Path, settings: Settings
) -> None:
    (project / "a.txt").write_bytes(b"alpha\r\n")
    (project / "secret").write_text("s\n")
    (project / "secret").chmod(0o600)
    (project / "tool.sh").write_text("#!/bin/sh\n")
    (project / "tool.sh").chmod(0o755)
    (project / "gone.txt").write_text("to be deleted\n")
    (project / "link").symlink_to("a.txt")
    before = listing(project)
    checkpoints = Checkpoints(project, settings)
    saved = await checkpoints.begin("s", 1)
    assert saved.ok and saved.kind == "copy"
    await write(checkpoints, 1, project / "a.txt", b"edited")
    await write(checkpoints, 1, project / "secret", b"leaked")
    (project / "secret").chmod(0o644)
    await write(checkpoints, 1, project / "tool.sh", b"echo\n")
    await write(checkpoints, 1, project / "gone.txt", None)
    await write(checkpoints, 1, project / "new" / "deep" / "file.txt", b"new")
    await write(checkpoints, 1, project / "link", None)
    await write(checkpoints, 1, project / "link", b"a file now")
    await write(checkpoints, 1, project / "a.txt", b"edited twice")  # kept once, first
    assert (await checkpoints.end("s", 1)).ok
    done = await Checkpoints(project, settings).restore("s", 1)  # nothing from memory
    assert done.ok and done.kind == "copy", done.error
    assert listing(project) == before
    assert done.created == ["gone.txt"] and done.deleted == ["new/deep/file.txt"]
    assert done.restored == ["a.txt", "link", "secret", "tool.sh"] and done.outside == []


async def test_what_execute_changes_is_not_seen_without_git(
    no_git: None, project: Path, settings: Settings
) -> None:
    (project / "f").write_text("1\n")
    (project / "g").write_text("1\n")
    checkpoints = Checkpoints(project, settings)
    await checkpoints.begin("s", 1)
    await write(checkpoints, 1, project / "f", b"by a file tool\n")
    (project / "g").write_text("by a command\n")  # `execute`: no before_write
    done = await checkpoints.restore("s", 1)
    assert done.restored == ["f"] and (project / "f").read_text() == "1\n"
    assert (project / "g").read_text() == "by a command\n"


async def test_the_users_edits_are_reported_without_git(
    no_git: None, project: Path, settings: Settings
) -> None:
    (project / "f").write_text("1\n")
    checkpoints = Checkpoints(project, settings)
    await checkpoints.begin("s", 1)
    await write(checkpoints, 1, project / "f", b"agent\n")
    await checkpoints.end("s", 1)
    (project / "f").write_text("the user\n")
    await checkpoints.begin("s", 2)
    await write(checkpoints, 2, project / "f", b"agent again\n")
    await checkpoints.end("s", 2)
    assert (await checkpoints.restore("s", 2, dry_run=True)).outside == []
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.restored == ["f"] and plan.outside == ["f"]
    assert (project / "f").read_text() == "agent again\n"


async def test_paths_outside_the_folder_are_not_kept(
    no_git: None, tmp_path: Path, project: Path, settings: Settings
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "f").write_text("theirs\n")
    (project / "escape").symlink_to(outside)
    checkpoints = Checkpoints(project, settings)
    await checkpoints.begin("s", 1)
    for path in (outside / "f", project / ".." / "elsewhere" / "f", project / "escape" / "f",
                 project / ".git" / "config", "/etc/passwd"):  # fmt: skip
        assert not await checkpoints.before_write("s", 1, path), path
    record = checkpoints.copies.load("s", 1)
    assert record is not None and record["files"] == {}


async def test_big_files_are_not_copied(
    no_git: None, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELELEM_CHECKPOINTS_MAX_FILE", "100")
    checkpoints = Checkpoints(project, Settings.from_env())
    (project / "big").write_bytes(b"x" * 200)
    await checkpoints.begin("s", 1)
    assert not await checkpoints.before_write("s", 1, project / "big")
    (project / "big").write_bytes(b"y")
    done = await checkpoints.restore("s", 1)
    assert done.ok and done.uncovered == ["big"] and (project / "big").read_bytes() == b"y"
    assert not list((checkpoints.copies.folder / "blobs").glob("*"))


async def test_a_record_naming_a_strange_blob_restores_nothing(
    no_git: None, project: Path, settings: Settings
) -> None:
    checkpoints = Checkpoints(project, settings)
    await checkpoints.begin("s", 1)
    target = "../../../../../../etc/hostname"
    state = {"kind": "file", "blob": target, "mode": 0o644, "size": 1}
    record = {"at": time.time(), "files": {"f": state}, "end": None}
    checkpoints.copies.save("s", 1, record)
    done = await checkpoints.restore("s", 1)
    assert done.uncovered == ["f"] and not (project / "f").exists()
    assert os.listdir(project) == []
