"""A turn that writes, edits, creates and deletes, runs `sed -i`, `rm`, `chmod`, `rmdir`,
is restored to a tree byte-identical to the one before, modes and empty folders too:
in a git repository (which shows no trace of it), in a plain folder, after a restart."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from elelem_daemon.checkpoints import Checkpoints, Settings

from .support import git, listing, repo_state

NAMES = ("ünï cødé.txt", "-rf", "new\nline", "spaces  .txt", "*.glob[1]")


def tree(root: Path) -> None:
    """The project before the turn."""
    (root / "a.txt").write_text("alpha\n")
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "src" / "util.py").write_text("def f():\n    return 1\n")
    (root / "script.sh").write_text("#!/bin/sh\necho run\n")
    (root / "tool.sh").write_text("#!/bin/sh\necho tool\n")
    (root / "tool.sh").chmod(0o755)
    (root / "secret.env").write_text("TOKEN=1\n")
    (root / "secret.env").chmod(0o600)
    (root / "config.ini").write_text("[x]\nkey = x\n")
    (root / "empty").mkdir()
    (root / "keep" / "nested" / "empty2").mkdir(parents=True)
    (root / "link").symlink_to("a.txt")
    (root / "binary.bin").write_bytes(bytes(range(256)) * 4 + b"\r\n\0\r")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (root / ".gitattributes").write_text("*.txt text eol=crlf\n*.bin text\n")
    (root / ".gitignore").write_text("*.log\n")
    (root / "build.log").write_text("old log\n")
    for name in NAMES:
        (root / name).write_text(f"{name}\n")


def agent(root: Path) -> None:
    """What the turn does: file tools, and `execute` running sed, rm, chmod, rmdir."""
    (root / "a.txt").write_text("alpha, edited\n")
    (root / "new.txt").write_text("created\n")
    (root / "newdir" / "deep").mkdir(parents=True)
    (root / "newdir" / "deep" / "file").write_text("deep\n")
    (root / "newempty" / "inner").mkdir(parents=True)
    (root / "binary.bin").write_bytes(b"\0" * 10)
    (root / "crlf.txt").write_bytes(b"one\ntwo\n")
    (root / "link").unlink()
    (root / "link").write_text("no longer a link\n")
    (root / "nowlink").symlink_to("src/main.py")
    (root / "build.log").write_text("new log\n")
    (root / "empty" / "filled").write_text("now it holds a file\n")
    (root / NAMES[0]).unlink()
    (root / NAMES[2]).write_text("changed\n")
    shell = (
        "sed -i 's/x/y/' config.ini && rm src/util.py secret.env -- -rf && "
        "chmod +x script.sh && chmod -x tool.sh && chmod 640 'spaces  .txt' && "
        "rmdir keep/nested/empty2"
    )
    subprocess.run(["sh", "-c", shell], cwd=root, check=True)


def agreed(before: dict, after: dict) -> dict:
    """The entries that differ (ignored build.log aside: checkpoints leave it alone)."""
    keys = (set(before) | set(after)) - {"build.log"}
    return {k: (before.get(k), after.get(k)) for k in sorted(keys) if before.get(k) != after.get(k)}


async def rewound(project: Path, settings: Settings, build: bool = True) -> Checkpoints:
    if build:
        tree(project)
    before = listing(project)
    checkpoints = Checkpoints(project, settings)
    saved = await checkpoints.begin("s1", 1)
    assert saved.ok and saved.kind == "git" and saved.first, saved
    agent(project)
    assert (await checkpoints.end("s1", 1)).ok
    assert agreed(before, listing(project))  # the turn did change things
    done = await checkpoints.restore("s1", 1)
    assert done.ok, done.error
    assert agreed(before, listing(project)) == {}
    assert (project / "build.log").read_text() == "new log\n"  # ignored: not checkpointed
    assert "src/util.py" in done.created and "new.txt" in done.deleted
    assert "a.txt" in done.restored and "script.sh" in done.restored
    assert done.dirs_created == ["keep/nested/empty2"]
    assert done.dirs_removed == ["newempty/inner", "newempty"]
    assert done.outside == [] and done.undo
    return checkpoints


async def test_a_turn_is_restored_byte_for_byte_in_a_plain_folder(
    project: Path, settings: Settings
) -> None:
    await rewound(project, settings)


async def test_a_turn_is_restored_in_a_repository_that_shows_no_trace(
    project: Path, settings: Settings
) -> None:
    git(project, "init", "-q")
    tree(project)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "the user's work")
    (project / "a.txt").write_text("stashed by the user\n")
    git(project, "stash", "-q")  # a stash of the user's, which must stay as it is
    (project / "a.txt").write_text("alpha\n")  # and work in progress: staged, not
    (project / "staged.txt").write_text("staged\n")
    git(project, "add", "staged.txt")
    (project / "src" / "main.py").write_text("print('unstaged')\n")
    user = repo_state(project)
    assert user["status"] and user["stash"]
    await rewound(project, settings, build=False)
    assert repo_state(project) == user


async def test_a_dry_run_changes_nothing(project: Path, settings: Settings) -> None:
    tree(project)
    checkpoints = Checkpoints(project, settings)
    await checkpoints.begin("s1", 1)
    agent(project)
    after = listing(project)
    plan = await checkpoints.restore("s1", 1, dry_run=True)
    assert plan.ok and plan.dry_run and plan.undo is None
    assert "src/util.py" in plan.created and "new.txt" in plan.deleted
    assert plan.dirs_created == ["keep/nested/empty2"]
    assert listing(project) == after


async def test_rewinding_several_turns_goes_back_to_the_first(
    project: Path, settings: Settings
) -> None:
    (project / "f").write_text("0\n")
    checkpoints = Checkpoints(project, settings)
    trees = []
    for turn in range(1, 4):
        trees.append(listing(project))
        assert (await checkpoints.begin("s1", turn)).ok
        (project / "f").write_text(f"{turn}\n")
        (project / f"t{turn}").write_text("x")
        assert (await checkpoints.end("s1", turn)).ok
    assert (await checkpoints.restore("s1", 2)).ok
    assert listing(project) == trees[1]
    done = await checkpoints.restore("s1", 1)
    assert done.ok and listing(project) == trees[0]
    assert [c.turn for c in await checkpoints.list("s1")] == [1, 2, 3]


async def test_a_restore_can_itself_be_undone(project: Path, settings: Settings) -> None:
    (project / "f").write_text("before\n")
    checkpoints = Checkpoints(project, settings)
    await checkpoints.begin("s1", 1)
    (project / "f").write_text("after\n")
    done = await checkpoints.restore("s1", 1)
    assert (project / "f").read_text() == "before\n"
    refs = git(project, f"--git-dir={checkpoints.folder}", "for-each-ref", "refs/elelem-undo")
    assert done.undo in refs


async def test_an_unknown_checkpoint_is_data(project: Path, settings: Settings) -> None:
    checkpoints = Checkpoints(project, settings)
    done = await checkpoints.restore("s1", 7)
    assert not done.ok and done.kind == "unknown_checkpoint"
    assert done.error == "no checkpoint of turn 7 in session s1"
    await checkpoints.begin("s1", 1)
    done = await checkpoints.restore("s1", 7)
    assert not done.ok and done.kind == "unknown_checkpoint"


@pytest.mark.parametrize(
    ("session", "turn"), [("../x", 1), ("", 1), ("a b", 1), ("s", -1), ("s", "1"), ("s", True)]
)
async def test_bad_ids_are_refused(
    project: Path, settings: Settings, session: object, turn: object
) -> None:
    checkpoints = Checkpoints(project, settings)
    saved = await checkpoints.begin(session, turn)  # type: ignore[arg-type]
    assert not saved.ok and saved.kind == "refused" and "invalid" in (saved.error or "")
    done = await checkpoints.restore(session, turn)  # type: ignore[arg-type]
    assert not done.ok and done.kind == "refused"
    assert not (settings.root).exists() or not any(settings.root.glob("*/refs/elelem/*"))


CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from elelem_daemon.checkpoints import for_cwd, close_all

    async def main():
        checkpoints = for_cwd(sys.argv[1])
        saved = await checkpoints.begin("s1", 1)
        assert saved.ok, saved
        open(sys.argv[1] + "/a.txt", "w").write("changed by the turn\\n")
        assert (await checkpoints.end("s1", 1)).ok
        await close_all()

    asyncio.run(main())
    """
)


async def test_a_restore_works_in_a_new_process(project: Path, settings: Settings) -> None:
    tree(project)
    before = listing(project)
    subprocess.run([sys.executable, "-c", CHILD, str(project)], check=True, env=os.environ)
    assert (project / "a.txt").read_text() == "changed by the turn\n"
    checkpoints = Checkpoints(project, settings)  # a new object: nothing in memory
    listed = await checkpoints.list("s1")
    assert [(c.turn, c.kind, c.ended) for c in listed] == [(1, "git", True)]
    done = await checkpoints.restore("s1", 1)
    assert done.ok and done.restored == ["a.txt"]
    assert listing(project) == before


async def test_odd_entries_are_left_alone(
    tmp_path: Path, project: Path, settings: Settings
) -> None:
    """A fifo (in the tree, and as the user's info/exclude), a file that becomes a
    folder holding a big file: the checkpoint neither hangs nor keeps what it must not."""
    git(project, "init", "-q")
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").unlink(missing_ok=True)
    os.mkfifo(project / ".git" / "info" / "exclude")
    os.mkfifo(project / "pipe")
    (project / "was-a-file").write_text("file\n")
    checkpoints = Checkpoints(project, Settings(root=settings.root, max_file=100))
    saved = await checkpoints.begin("s", 1)
    assert saved.ok, saved.error
    (project / "was-a-file").unlink()
    (project / "was-a-file").mkdir()
    (project / "was-a-file" / "big").write_bytes(b"x" * 1000)
    (project / "was-a-file" / "small").write_text("small\n")
    saved = await checkpoints.end("s", 1)
    assert saved.ok and saved.skipped == ["was-a-file/big"], saved
    shadow = f"--git-dir={checkpoints.folder}"
    assert git(project, shadow, "ls-tree", "-r", "--name-only", "HEAD").split() == [
        "was-a-file/small"
    ]
