"""Retention: a session keeps its last N turns, nothing older than D days stays, a
deleted session's checkpoints go, `git gc` frees them, unused shadows are removed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from elelem_daemon.checkpoints import Checkpoints, Settings
from elelem_daemon.checkpoints.retention import DAY, expired, stale_folders

from .support import git, run_git


def refs(checkpoints: Checkpoints) -> list[str]:
    out = git(
        checkpoints.cwd, f"--git-dir={checkpoints.folder}", "for-each-ref", "--format=%(refname)"
    )
    return [line for line in out.splitlines() if line.startswith("refs/elelem")]


def test_the_last_turns_of_each_session_are_kept() -> None:
    now = 1_000_000.0
    listed = [(f"refs/elelem/a/{t}", "c", int(now)) for t in (1, 2, 3, 10)]
    listed += [(f"refs/elelem-end/a/{t}", "c", int(now)) for t in (1, 2, 3, 10)]
    listed += [("refs/elelem/b/1", "c", int(now)), ("refs/heads/main", "c", 0)]
    assert sorted(expired(listed, keep=2, days=30, now=now)) == [
        "refs/elelem-end/a/1", "refs/elelem-end/a/2", "refs/elelem/a/1", "refs/elelem/a/2",
    ]  # fmt: skip


def test_old_checkpoints_go_with_their_whole_turn() -> None:
    now = 1_000_000_000.0
    old, new = int(now - 31 * DAY), int(now - 29 * DAY)
    listed = [
        ("refs/elelem/a/1", "c", old),
        ("refs/elelem-end/a/1", "c", new),
        ("refs/elelem/a/2", "c", new),
    ]
    assert expired(listed, keep=100, days=30, now=now) == ["refs/elelem/a/1", "refs/elelem-end/a/1"]


async def test_forgetting_a_session_removes_its_refs_and_gc_frees_them(
    project: Path, settings: Settings
) -> None:
    checkpoints = Checkpoints(project, settings)
    for session in ("a", "b"):
        for turn in (1, 2, 3):
            (project / "f").write_text(f"{session}{turn}\n")
            await checkpoints.begin(session, turn)
            await checkpoints.end(session, turn)
    (project / "only-a").write_text("x" * 5000)
    await checkpoints.begin("a", 4)
    blob = git(project, "hash-object", "only-a").strip()
    (project / "only-a").unlink()
    await checkpoints.begin("b", 4)  # HEAD moves on: only a's refs hold the blob
    assert await checkpoints.forget("a", since=3) == 2
    assert not [r for r in refs(checkpoints) if r.startswith("refs/elelem/a/") and r[-1] in "34"]
    assert await checkpoints.forget("a") == 2
    assert not [r for r in refs(checkpoints) if "/a/" in r]
    assert len([r for r in refs(checkpoints) if "/b/" in r]) == 7
    assert checkpoints._upkeep is not None
    await checkpoints._upkeep  # the gc forget asked for, in the background
    shadow = f"--git-dir={checkpoints.folder}"
    assert run_git(project, shadow, "cat-file", "-e", blob, check=False).returncode != 0
    assert [c.turn for c in await checkpoints.list("b")] == [1, 2, 3, 4]
    assert await checkpoints.list("a") == []


async def test_upkeep_prunes_by_count(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELELEM_CHECKPOINTS_KEEP", "2")
    checkpoints = Checkpoints(project, Settings.from_env())
    for turn in range(1, 6):
        await checkpoints.begin("s", turn)
    await checkpoints.upkeep(prune=True, gc=False)
    assert [c.turn for c in await checkpoints.list("s")] == [4, 5]


async def test_a_shadow_unused_for_days_is_removed(
    tmp_path: Path, project: Path, settings: Settings
) -> None:
    checkpoints = Checkpoints(project, settings)
    await checkpoints.begin("s", 1)
    other = tmp_path / "other"
    other.mkdir()
    theirs = Checkpoints(other, settings)
    await theirs.begin("s", 1)
    await checkpoints.close()
    await theirs.close()
    assert await stale_folders(settings.root, days=30) == []
    old = time.time() - 31 * DAY
    os.utime(checkpoints.folder / "cwd", (old, old))
    assert await stale_folders(settings.root, days=30) == [checkpoints.folder]
    assert not checkpoints.folder.exists() and theirs.folder.exists()
    other.rmdir()  # its folder is gone: so goes its shadow
    assert await stale_folders(settings.root, days=30) == [theirs.folder]


async def test_copies_are_pruned_too(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git here
    monkeypatch.setenv("ELELEM_CHECKPOINTS_KEEP", "2")
    checkpoints = Checkpoints(project, Settings.from_env())
    for turn in range(1, 5):
        await checkpoints.begin("s", turn)
        assert await checkpoints.before_write("s", turn, project / "f")
        (project / "f").write_text(f"{turn}\n")
    await checkpoints.upkeep(prune=True, gc=False)
    assert [c.turn for c in await checkpoints.list("s")] == [3, 4]
    assert len(list((checkpoints.copies.folder / "blobs").glob("*"))) == 2  # "2\n", "3\n"
    assert await checkpoints.forget("s") == 2
    assert await checkpoints.list("s") == []


async def test_lock_files_a_killed_gc_left_do_not_stop_a_forget(
    project: Path, settings: Settings
) -> None:
    checkpoints = Checkpoints(project, settings)
    for turn in (1, 2):
        (project / "f").write_text(f"{turn}\n")
        assert (await checkpoints.begin("a", turn)).ok
    await checkpoints._stop_upkeep()
    for stale in ("packed-refs.lock", "refs/elelem/a/1.lock", "refs/elelem-end/a/2.lock"):
        (checkpoints.folder / stale).parent.mkdir(parents=True, exist_ok=True)
        (checkpoints.folder / stale).write_text("")  # as a SIGKILLed git leaves them
    assert await checkpoints.forget("a", since=1) == 2
    assert not [r for r in refs(checkpoints) if "/a/" in r]
