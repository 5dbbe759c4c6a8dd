"""A hostile project: its `.git/config`, hooks, attributes and the daemon's own GIT_*
variables try to run a program through every door git has. Checkpoints open none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elelem_daemon.checkpoints import Checkpoints, Settings

from .support import git, listing

HOOKS = (
    "pre-commit", "post-commit", "commit-msg", "prepare-commit-msg", "post-checkout",
    "post-merge", "post-rewrite", "pre-auto-gc", "post-index-change", "reference-transaction",
    "fsmonitor-watchman", "pre-push", "post-update",
)  # fmt: skip


def evil_config(program: Path) -> str:
    return f"""
[core]
    fsmonitor = {program}
    hooksPath = {program.parent / "hooks"}
    pager = {program}
    editor = {program}
    sshCommand = {program}
    askPass = {program}
    untrackedCache = false
[filter "evil"]
    clean = {program}
    smudge = {program}
    process = {program}
    required = true
[diff "evil"]
    textconv = {program}
    command = {program}
[diff]
    external = {program}
[gc]
    auto = 1
[credential]
    helper = !{program}
"""


@pytest.fixture
def hostile(tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ran = tmp_path / "ran"
    program = tmp_path / "evil" / "evil.sh"
    program.parent.mkdir()
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {ran}\ncat\n')
    program.chmod(0o755)
    (program.parent / "hooks").mkdir()
    git(project, "init", "-q")
    (project / "a.txt").write_text("one\r\ntwo\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "first")
    (project / ".git" / "config").write_text(
        (project / ".git" / "config").read_text() + evil_config(program)
    )
    for name in HOOKS:
        for folder in (project / ".git" / "hooks", program.parent / "hooks"):
            folder.mkdir(exist_ok=True)
            (folder / name).write_text(program.read_text())
            (folder / name).chmod(0o755)
    (project / ".gitattributes").write_text("* filter=evil diff=evil text eol=crlf ident\n")
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text(evil_config(program))
    (home / ".config" / "git" / "config").write_text(evil_config(program))
    (home / ".config" / "git" / "attributes").write_text("* filter=evil\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name, value in {
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{program}'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": str(program),
        "GIT_EXTERNAL_DIFF": str(program),
        "GIT_PAGER": str(program),
        "GIT_EDITOR": str(program),
        "GIT_SSH_COMMAND": str(program),
        "GIT_ASKPASS": str(program),
        "GIT_EXEC_PATH": str(program.parent),
        "GIT_DIR": str(project / ".git"),
        "GIT_WORK_TREE": "/",
        "GIT_INDEX_FILE": str(project / ".git" / "index"),
        "GIT_CONFIG_SYSTEM": str(home / ".gitconfig"),
    }.items():
        monkeypatch.setenv(name, value)
    return ran


async def test_a_hostile_repository_runs_nothing(
    hostile: Path, project: Path, settings: Settings
) -> None:
    checkpoints = Checkpoints(project, settings)
    (project / "b.bin").write_bytes(b"\r\n\0$Id$\r\n")
    before = listing(project)
    saved = await checkpoints.begin("s", 1)
    assert saved.ok, saved.error
    (project / "a.txt").write_text("agent\n")
    (project / "c.txt").write_text("new\n")
    (project / "b.bin").unlink()
    assert (await checkpoints.end("s", 1)).ok
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.ok, plan.error
    done = await checkpoints.restore("s", 1)
    assert done.ok, done.error
    await checkpoints.upkeep(prune=True, gc=True)
    assert not hostile.exists(), hostile.read_text()
    # no filter, eol or ident conversion either: the bytes are the bytes
    assert listing(project) == before
    assert (project / "a.txt").read_bytes() == b"one\r\ntwo\n"


async def test_the_shadow_ignores_the_users_git_variables(
    hostile: Path, project: Path, settings: Settings
) -> None:
    """GIT_DIR and GIT_INDEX_FILE point at the user's repository: it stays as it was."""
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        value = os.environ[name]
        os.environ.pop(name)
        os.environ[name] = value
    index = (project / ".git" / "index").read_bytes()
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).ok
    assert (project / ".git" / "index").read_bytes() == index
    assert not (project / ".git" / "refs" / "elelem").exists()
    assert not hostile.exists()


async def test_a_symlink_planted_in_the_tree_leads_no_restore_outside(
    tmp_path: Path, project: Path, settings: Settings
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "keep" / "empty").mkdir(parents=True)
    (project / "keep" / "f").write_text("f\n")
    before = listing(project)
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).ok
    for path in (project / "keep" / "f", project / "keep" / "empty"):
        path.unlink() if path.is_file() else path.rmdir()
    (project / "keep").rmdir()
    (project / "keep").symlink_to(outside)
    done = await checkpoints.restore("s", 1)
    assert done.ok, done.error
    assert listing(project) == before and list(outside.iterdir()) == []


async def test_a_symlink_planted_in_the_tree_leads_no_copy_outside(
    tmp_path: Path, project: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-git"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "dir").mkdir()
    (project / "dir" / "f").write_text("mine\n")
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).kind == "copy"
    assert await checkpoints.before_write("s", 1, project / "dir" / "f")
    (project / "dir" / "f").unlink()
    (project / "dir").rmdir()
    (project / "dir").symlink_to(outside)
    done = await checkpoints.restore("s", 1)
    assert done.uncovered == ["dir/f"] and list(outside.iterdir()) == []
