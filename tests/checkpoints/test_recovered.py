"""Recovery (checkpoints/recovery.py, issue 36): when a path the checkpoint left out
vanished during an undone turn, what the restore deletes or overwrites is copied into
`<state>/recovered/` first; a copy that cannot be made stops the restore before any
file is touched. The engine's side; tests/e2e/test_rewind_recovered.py drives the
commands through `execute` and `/undo`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from elelem_daemon.checkpoints import Checkpoints, Settings

from .support import git
from .test_owned import SECRET, turn


def ignored_folder_repo(project: Path) -> None:
    git(project, "init", "-q")
    (project / ".gitignore").write_text("secrets/\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "key.pem").write_bytes(SECRET)


async def test_a_folder_ignored_whole_and_moved_is_kept_aside(
    project: Path, state: Path, settings: Settings
) -> None:
    ignored_folder_repo(project)
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, 1, lambda: os.rename(project / "secrets", project / "stash"))
    done = await checkpoints.restore("s", 1)
    assert done.ok and done.deleted == ["stash/key.pem"]
    assert done.vanished == ["secrets/"]
    folder = state / "recovered" / "s-turn1"
    assert done.recovery == str(folder)
    assert done.recovered == [{"path": "stash/key.pem", "to": str(folder / "stash/key.pem")}]
    assert (folder / "stash" / "key.pem").read_bytes() == SECRET
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert not (project / "stash").exists()


async def test_a_symlink_is_kept_as_a_symlink_and_a_second_rewind_gets_its_own_folder(
    project: Path, state: Path, settings: Settings
) -> None:
    ignored_folder_repo(project)
    checkpoints = Checkpoints(project, settings)

    def agent() -> None:
        os.rename(project / "secrets" / "key.pem", project / "key.pem")
        os.symlink("key.pem", project / "link")

    await turn(checkpoints, 1, agent)
    (state / "recovered" / "s-turn1").mkdir(parents=True)  # taken: the next one is used
    done = await checkpoints.restore("s", 1)
    folder = state / "recovered" / "s-turn1-2"
    assert done.ok and done.recovery == str(folder)
    assert os.readlink(folder / "link") == "key.pem"
    assert (folder / "key.pem").read_bytes() == SECRET


async def test_a_copy_that_cannot_be_made_stops_the_restore_before_any_file_is_touched(
    project: Path, state: Path, settings: Settings
) -> None:
    ignored_folder_repo(project)
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, 1, lambda: os.rename(project / "secrets", project / "stash"))
    state.mkdir(exist_ok=True)
    (state / "recovered").write_text("a file where the folder goes\n")
    done = await checkpoints.restore("s", 1)
    assert not done.ok and done.kind == "io_error"
    assert "not restored" in (done.error or "")
    assert (project / "stash" / "key.pem").read_bytes() == SECRET


async def test_a_dry_run_names_the_folder_and_copies_nothing(
    project: Path, state: Path, settings: Settings
) -> None:
    ignored_folder_repo(project)
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, 1, lambda: os.rename(project / "secrets", project / "stash"))
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.recovered and plan.recovery is not None
    assert not (state / "recovered").exists()
