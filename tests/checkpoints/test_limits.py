"""Bounds: big files are left out, git runs out of time or is cancelled (its whole
process group goes), checkpoints can be turned off, and bad settings are named."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from elelem_daemon.checkpoints import Checkpoints, Settings

from .support import git, run_git


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def gone(pids: list[int], within: float = 60.0) -> bool:
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_files_over_the_limit_are_left_out(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELELEM_CHECKPOINTS_MAX_FILE", "1K")
    settings = Settings.from_env()
    (project / "big.bin").write_bytes(b"b" * 2048)
    (project / "huge.img").touch()
    os.truncate(project / "huge.img", 1 << 30)  # sparse: 1 GB that costs nothing to make
    (project / "small.bin").write_bytes(b"s" * 10)
    checkpoints = Checkpoints(project, settings)
    saved = await checkpoints.begin("s", 1)
    assert saved.ok and saved.skipped == ["big.bin", "huge.img"]
    blob = git(project, "hash-object", "big.bin").strip()
    shadow = f"--git-dir={checkpoints.folder}"
    assert run_git(project, shadow, "cat-file", "-e", "HEAD").returncode == 0
    assert run_git(project, shadow, "cat-file", "-e", blob, check=False).returncode != 0
    assert "big.bin" not in git(project, f"--git-dir={checkpoints.folder}", "ls-tree", "-r", "HEAD")
    (project / "big.bin").write_bytes(b"B" * 4096)
    (project / "small.bin").write_bytes(b"S" * 4096)  # grows past the limit
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.unsaved == ["small.bin"] and plan.restored == ["small.bin"]
    done = await checkpoints.restore("s", 1)
    assert done.ok and (project / "small.bin").read_bytes() == b"s" * 10
    assert (project / "big.bin").read_bytes() == b"B" * 4096  # never saved: left as it is


@pytest.fixture
def slow_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` that answers its version, then hangs with a child of its own."""
    folder = tmp_path / "slowbin"
    folder.mkdir()
    pids = tmp_path / "pids"
    (folder / "git").write_text(
        "#!/bin/sh\n"
        'if [ "$1" = version ]; then echo "git version 2.45.0"; exit 0; fi\n'
        f"sleep 60 & echo $$ $! > {pids}.tmp && mv {pids}.tmp {pids}\n"
        "wait\n"
    )
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    return pids


async def test_a_git_out_of_time_is_killed_and_reported(
    project: Path, slow_git: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELELEM_CHECKPOINTS_TIMEOUT", "0.5")
    checkpoints = Checkpoints(project, Settings.from_env())
    saved = await checkpoints.begin("s", 1)
    assert not saved.ok and saved.kind == "timeout" and "0.5 s" in (saved.error or "")
    assert await gone([int(p) for p in slow_git.read_text().split()])
    # git checkpoints stop for this folder; the file tools' copies go on
    again = await checkpoints.begin("s", 2)
    assert again.ok and again.kind == "copy" and "timeout" in (again.error or "")
    assert await checkpoints.before_write("s", 2, project / "f")


async def test_a_cancelled_checkpoint_kills_git(
    project: Path, slow_git: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELELEM_CHECKPOINTS_TIMEOUT", "600")  # the cancel comes first
    checkpoints = Checkpoints(project, Settings.from_env())
    task = asyncio.ensure_future(checkpoints.begin("s", 1))
    deadline = time.monotonic() + 120
    while not slow_git.exists():
        assert time.monotonic() < deadline, "git never started"
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone([int(p) for p in slow_git.read_text().split()])


async def test_a_cancel_is_never_lost_in_a_checkpoint(project: Path, settings: Settings) -> None:
    """A turn cancelled while its checkpoint is taken must end there: a lost cancel
    would let its tools run (once, a cancel while `begin` stopped a gc was swallowed)."""
    checkpoints = Checkpoints(project, settings)
    for turn, delay in enumerate([None, 0, 0.001, 0.005, 0.02, 0.05], start=1):
        (project / "f.txt").write_text(str(turn))
        task = asyncio.ensure_future(checkpoints.begin("s", turn))
        if delay is None:  # the first checkpoint: it starts a gc in the background
            assert (await task).ok and checkpoints._upkeep is not None
            continue
        await asyncio.sleep(delay)
        if not task.cancel():  # it was over already
            continue
        try:
            saved = await task
        except asyncio.CancelledError:
            continue
        raise AssertionError(f"turn {turn}: a cancelled checkpoint answered {saved}")


async def test_checkpoints_can_be_turned_off(
    project: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELELEM_CHECKPOINTS", "0")
    checkpoints = Checkpoints(project, Settings.from_env())
    saved = await checkpoints.begin("s", 1)
    assert (
        not saved.ok and saved.kind == "disabled" and "ELELEM_CHECKPOINTS=0" in (saved.error or "")
    )
    assert not await checkpoints.before_write("s", 1, project / "f")
    assert (await checkpoints.restore("s", 1)).kind == "disabled"
    assert not state.exists()


async def test_the_home_folder_gets_copies_only(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    checkpoints = Checkpoints(home, settings)
    saved = await checkpoints.begin("s", 1)
    assert saved.ok and saved.kind == "copy" and "home folder" in (saved.error or "")


@pytest.mark.parametrize("folder", ["/proc", "/proc/self", "/sys", "/dev"])
async def test_system_folders_get_copies_only(folder: str, settings: Settings) -> None:
    saved = await Checkpoints(folder, settings).begin("s", 1)  # no git walks /proc
    assert saved.ok and saved.kind == "copy" and "a system folder" in (saved.error or "")


def test_bad_settings_keep_their_defaults_and_are_named() -> None:
    settings = Settings.from_env(
        {
            "ELELEM_CHECKPOINTS_KEEP": "many",
            "ELELEM_CHECKPOINTS_DAYS": "-1",
            "ELELEM_CHECKPOINTS_MAX_FILE": "5 parsecs",
            "ELELEM_CHECKPOINTS_TIMEOUT": "0",
            "ELELEM_STATE_DIR": "/tmp/x",
        }
    )
    assert (settings.keep, settings.days, settings.max_file, settings.timeout) == (
        100, 30.0, 5 << 20, 30.0,
    )  # fmt: skip
    assert len(settings.problems) == 4
    assert "ELELEM_CHECKPOINTS_KEEP='many' is not a number from 1 to 100000" in settings.problems
    assert settings.root == Path("/tmp/x/checkpoints")
    good = Settings.from_env({"ELELEM_CHECKPOINTS_MAX_FILE": "2k", "ELELEM_CHECKPOINTS_KEEP": "3"})
    assert (good.max_file, good.keep, good.problems) == (2048, 3, ())
    for off in ("0", "off", "False", "no"):
        assert not Settings.from_env({"ELELEM_CHECKPOINTS": off}).enabled


async def test_the_checkpoint_folder_is_the_users_alone(
    tmp_path: Path, project: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).ok
    assert checkpoints.folder.stat().st_mode & 0o777 == 0o700
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    copies = Checkpoints(other, settings)
    assert (await copies.begin("s", 1)).kind == "copy"
    assert copies.folder.stat().st_mode & 0o777 == 0o700


async def test_a_shadow_that_names_another_folder_is_not_used(
    project: Path, settings: Settings
) -> None:
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).ok
    (checkpoints.folder / "cwd").write_text("/somewhere/else\n")
    saved = await Checkpoints(project, settings).begin("s", 2)
    assert not saved.ok and "another folder" in (saved.error or "")
