"""What the agent left in an editor's buffers (a change `files/propose` applied and
nobody saved yet) is part of the turn's end state: the turn's files list it, the user
saving it later is not an outside change, their own edits on top of it are, and a
restore names the buffers it affects (docs/checkpoints.md, "Editor buffers")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from elelem_daemon.checkpoints import Checkpoints, Settings


async def buffered_turn(
    checkpoints: Checkpoints, project: Path, number: int, texts: dict[str, str]
) -> None:
    """A turn whose changes the editor applied to its buffers: the disk is untouched."""
    assert (await checkpoints.begin("s", number)).ok
    saved = await checkpoints.end("s", number, buffers={project / p: t for p, t in texts.items()})
    assert saved.ok, saved


async def test_a_change_left_in_a_buffer_is_the_turns(project: Path, settings: Settings) -> None:
    (project / "f").write_text("disk\n")
    (project / "other").write_text("same\n")
    checkpoints = Checkpoints(project, settings)
    await buffered_turn(checkpoints, project, 1, {"f": "agent\n", "other": "same\n"})
    assert (await checkpoints.changes("s")) == {1: ["f"]}
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.outside == [] and plan.buffers == ["f"] and plan.restored == ["f"]


async def test_saving_the_agents_buffer_after_the_turn_is_not_outside(
    project: Path, settings: Settings
) -> None:
    (project / "f").write_text("disk\n")
    checkpoints = Checkpoints(project, settings)
    await buffered_turn(checkpoints, project, 1, {"f": "agent\n"})
    (project / "f").write_text("agent\n")  # the user saves the buffer
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.outside == [] and plan.restored == ["f"] and plan.buffers == ["f"]
    done = await checkpoints.restore("s", 1, force=False)
    assert done.ok, done
    assert (project / "f").read_text() == "disk\n"


async def test_the_users_edits_on_top_of_the_agents_are_outside(
    project: Path, settings: Settings
) -> None:
    (project / "f").write_text("disk\n")
    checkpoints = Checkpoints(project, settings)
    await buffered_turn(checkpoints, project, 1, {"f": "agent\n"})
    (project / "f").write_text("agent, then the user\n")
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.outside == ["f"]


async def test_a_buffer_saved_between_two_turns_is_not_outside(
    project: Path, settings: Settings
) -> None:
    (project / "f").write_text("disk\n")
    checkpoints = Checkpoints(project, settings)
    await buffered_turn(checkpoints, project, 1, {"f": "one\n"})
    await buffered_turn(checkpoints, project, 2, {"f": "two\n"})  # turn 1's still unsaved
    (project / "f").write_text("two\n")
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.outside == [] and plan.buffers == ["f"]
    assert (await checkpoints.changes("s")) == {1: ["f"], 2: ["f"]}


async def test_hostile_buffer_paths_are_left_out(project: Path, settings: Settings) -> None:
    (project / "f").write_text("disk\n")
    (project / ".gitignore").write_text("ignored\n")
    (project / "ignored").write_text("x\n")
    (project / "link").symlink_to("f")
    outside = project.parent / "elsewhere"
    outside.write_text("not ours\n")
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).ok
    texts = {
        outside: "agent\n",  # not in the folder
        project / "ignored": "agent\n",  # ignored: no checkpoint holds it
        project / "link": "agent\n",  # a symlink's entry is not a file's text
        project / ".git" / "config": "agent\n",
        project / "new": "agent\n",  # in a buffer only, never on disk: not kept
        project / "f": "agent\n",
    }
    assert (await checkpoints.end("s", 1, buffers=texts)).ok
    assert (await checkpoints.changes("s")) == {1: ["f"]}
    assert (project / "f").read_text() == "disk\n"
    assert outside.read_text() == "not ours\n"


async def test_a_text_past_the_size_limit_is_left_out(project: Path, state: Path) -> None:
    settings = replace(Settings.from_env(), max_file=10)
    (project / "f").write_text("disk\n")
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).ok
    assert (await checkpoints.end("s", 1, buffers={project / "f": "x" * 11})).ok
    assert (await checkpoints.changes("s")) == {1: []}


async def test_a_planted_buffers_index_is_neither_followed_nor_fatal(
    project: Path, settings: Settings
) -> None:
    (project / "f").write_text("disk\n")
    checkpoints = Checkpoints(project, settings)
    await buffered_turn(checkpoints, project, 1, {"f": "one\n"})  # the shadow exists now
    victim = project.parent / "victim"
    victim.write_text("keep me\n")
    shadow = checkpoints.folder
    (shadow / "index.buffers").symlink_to(victim)
    (shadow / "index.buffers.lock").write_text("a killed git's\n")
    folder = project.parent / "victims"
    folder.mkdir()
    (folder / "0").write_text("keep me too\n")
    (shadow / "buffers.tmp").symlink_to(folder)
    await buffered_turn(checkpoints, project, 2, {"f": "two\n"})
    assert victim.read_text() == "keep me\n"
    assert (folder / "0").read_text() == "keep me too\n" and not (shadow / "buffers.tmp").exists()
    assert not (shadow / "index.buffers").exists()
    assert (await checkpoints.changes("s")) == {1: ["f"], 2: ["f"]}


async def test_an_end_without_buffers_is_the_disks_own_snapshot(
    project: Path, settings: Settings
) -> None:
    (project / "f").write_text("disk\n")
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).ok
    (project / "f").write_text("agent\n")  # the editor saved what it applied
    saved = await checkpoints.end("s", 1, buffers={project / "f": "agent\n"})
    shadow = await checkpoints._existing()
    assert shadow is not None and saved.commit == (await shadow.head()).commit  # type: ignore[union-attr]
    assert (await checkpoints.restore("s", 1, dry_run=True)).buffers == []


# -- without git: the copies keep the layer too ------------------------------------------
@pytest.fixture
def no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin-without-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


async def copied_turn(checkpoints: Checkpoints, project: Path, number: int, text: str) -> None:
    assert (await checkpoints.begin("s", number)).kind == "copy"
    assert await checkpoints.before_write("s", number, project / "f")  # the file tool's call
    assert (await checkpoints.end("s", number, buffers={project / "f": text})).ok


async def test_without_git_a_saved_buffer_is_not_outside(
    no_git: None, project: Path, settings: Settings
) -> None:
    (project / "f").write_text("disk\n")
    checkpoints = Checkpoints(project, settings)
    await copied_turn(checkpoints, project, 1, "agent\n")
    plan = await checkpoints.restore("s", 1, dry_run=True)  # never saved
    assert plan.outside == [] and plan.restored == ["f"] and plan.buffers == ["f"]
    (project / "f").write_text("agent\n")  # saved after the turn
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.outside == [] and plan.restored == ["f"] and plan.buffers == ["f"]
    (project / "f").write_text("agent, then the user\n")
    assert (await checkpoints.restore("s", 1, dry_run=True)).outside == ["f"]
    done = await checkpoints.restore("s", 1)
    assert done.ok and (project / "f").read_text() == "disk\n"
