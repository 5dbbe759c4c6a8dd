"""Every read of a file a repository or a command controls goes through one helper
(base/regular.py): a FIFO, a device or a huge file there is refused or cut at once,
never waited on (issue 36). Each call site is driven with a FIFO where its file should
be, in a thread with a bound: a read that waits fails the test instead of hanging it.
And a `.git` found by walking up is used only when it is the user's and not
world-writable (git's safe.directory rule)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.base import regular
from elelem_daemon.base.repository import repository_top
from elelem_daemon.context.environment import branch

BOUND = 5.0


def bounded(call: Callable[[], Any]) -> Any:
    """call() in a daemon thread; AssertionError when it has not returned in BOUND s."""
    found: list[Any] = []

    def run() -> None:
        try:
            found.append(("ok", call()))
        except BaseException as exc:  # handed to the test
            found.append(("raised", exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert found, f"{call} still waits after {BOUND} s"
    how, value = found[0]
    if how == "raised":
        raise value
    return value


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


# -- the helper ------------------------------------------------------------------------


def test_a_fifo_a_device_and_a_folder_are_refused_at_once(tmp_path: Path) -> None:
    for path in (fifo(tmp_path / "f"), Path("/dev/zero"), tmp_path):
        with pytest.raises(regular.NotRegular):
            bounded(lambda p=path: regular.read(p, 10))


def test_a_symlink_to_a_fifo_is_refused_and_one_to_a_file_followed(tmp_path: Path) -> None:
    (tmp_path / "to-fifo").symlink_to(fifo(tmp_path / "f"))
    with pytest.raises(regular.NotRegular):
        bounded(lambda: regular.read(tmp_path / "to-fifo", 10))
    (tmp_path / "file").write_bytes(b"abc")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    assert regular.read(tmp_path / "link", 10) == b"abc"
    with pytest.raises(regular.NotRegular):
        regular.read(tmp_path / "link", 10, follow=False)


def test_a_read_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 100_000)
    assert regular.read(tmp_path / "big", 10) == b"x" * 10
    assert regular.lines(tmp_path / "missing", 10) == []


# -- the call sites ----------------------------------------------------------------------


def test_agents_md_as_a_fifo_is_no_rules(tmp_path: Path) -> None:
    from elelem_daemon.transcript import SystemPrompt

    fifo(tmp_path / "AGENTS.md")
    prompt = SystemPrompt(cwd=tmp_path)
    assert bounded(prompt.agents_md) == ""


def test_a_gitignore_above_as_a_fifo_is_no_patterns(tmp_path: Path) -> None:
    from elelem_daemon.checkpoints.excludes import patterns

    (tmp_path / ".git").mkdir()
    fifo(tmp_path / ".gitignore")
    fifo(tmp_path / ".git" / "info" / "exclude")
    (tmp_path / "sub").mkdir()
    text = bounded(lambda: patterns(tmp_path / "sub", []))
    assert ".git" in text


def test_a_project_mcp_json_as_a_fifo_is_a_problem(tmp_path: Path) -> None:
    from elelem_daemon.mcp.config import Problems, read_file

    problems = Problems()
    assert bounded(lambda: read_file(fifo(tmp_path / ".mcp.json"), "project", problems)) == []
    assert problems and "not a regular file" in problems[0].message


def test_project_permissions_as_a_fifo_are_a_problem(tmp_path: Path, monkeypatch) -> None:
    from elelem_daemon.builtins.permissions import Policy

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    fifo(tmp_path / ".agents" / "permissions")
    policy = bounded(lambda: Policy.load(tmp_path))
    assert any("not a regular file" in problem for problem in policy.problems)


def test_a_plugin_file_that_is_a_fifo_is_a_load_error(tmp_path: Path) -> None:
    from elelem_daemon.plugins import load_folder
    from elelem_daemon.registry import Registry

    folder = tmp_path / ".agents" / "plugins"
    fifo(folder / "planted.py")
    registry = bounded(lambda: load_folder(Registry(), folder, "project"))
    (origin,) = registry.origins
    assert origin.error and "not a regular file" in origin.error


def test_skills_and_modes_as_fifos_are_skipped(tmp_path: Path) -> None:
    from elelem_daemon.builtins import modefiles, skills

    fifo(tmp_path / "skills" / "one" / "SKILL.md")
    fifo(tmp_path / "modes" / "one.md")
    found, problems = bounded(lambda: skills.load(tmp_path / "skills", "project"))
    assert found == [] and problems
    found, problems = bounded(lambda: modefiles.load(tmp_path / "modes", "project"))
    assert found == [] and problems


def test_what_trust_would_load_reads_no_fifo(tmp_path: Path) -> None:
    from elelem_daemon.safety.trust_list import loads

    skipped = [fifo(tmp_path / ".mcp.json"), fifo(tmp_path / ".agents" / "permissions")]
    assert bounded(lambda: loads(tmp_path, skipped)) == []


def test_the_trusted_folders_file_as_a_fifo_trusts_nothing(tmp_path: Path, monkeypatch) -> None:
    from elelem_daemon.safety import trust

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    fifo(trust.trusted_file())
    assert bounded(trust.trusted_folders) == []


# -- which .git counts -------------------------------------------------------------------


def repository(top: Path, head: str, mode: int = 0o755) -> Path:
    (top / ".git").mkdir(parents=True)
    (top / ".git" / "HEAD").write_text(f"ref: refs/heads/{head}\n")
    (top / ".git").chmod(mode)
    return top


def test_a_world_writable_git_in_a_parent_is_not_the_branch(tmp_path: Path) -> None:
    from elelem_daemon.transcript import SystemPrompt

    parent = repository(tmp_path / "tmp", "planted", 0o777)
    (parent / "AGENTS.md").write_text("planted rules")
    cwd = parent / "work"
    cwd.mkdir()
    assert repository_top(cwd) is None
    assert branch(cwd) is None
    assert SystemPrompt(cwd=cwd).agents_md() == ""


def test_walking_up_from_a_subfolder_still_finds_the_users_repository(tmp_path: Path) -> None:
    top = repository(tmp_path / "project", "main")
    deep = top / "src" / "pkg"
    deep.mkdir(parents=True)
    assert repository_top(deep) == top
    assert branch(deep) == "main"


def test_a_git_file_names_its_repository(tmp_path: Path) -> None:
    real = repository(tmp_path / "real", "feature")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {real / '.git'}\n")
    assert branch(work) == "feature"
