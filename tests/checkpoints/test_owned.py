"""A rewind touches only what the agent changed (issue 29): a file that existed before
the turn is never deleted by a rewind of that turn, whatever `.gitignore` (or
`info/exclude`) says now or said then, whether or not it was over the size limit, and
whatever became of a nested repository. What a checkpoint could not keep is left as it
is, and the plan says so (`kept`, with the reason); a deletion names the turn that
created the file (`createdBy`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elelem_daemon.checkpoints import Checkpoints, Settings

from .support import git

SECRET = b"API_TOKEN=the-users-own\n"
DB = bytes(range(256)) * 40


def owned_repo(project: Path) -> None:
    """A repository whose .gitignore lists the user's .env and database."""
    git(project, "init", "-q")
    (project / ".gitignore").write_text(".env\n*.sqlite\n")
    (project / ".env").write_bytes(SECRET)
    (project / "local.sqlite").write_bytes(DB)
    (project / "app.py").write_text("print('hi')\n")


def untouched(project: Path) -> None:
    assert (project / ".env").read_bytes() == SECRET
    assert (project / "local.sqlite").read_bytes() == DB


def kept(done) -> list[str]:  # noqa: ANN001
    return sorted(entry["path"] for entry in done.kept)


async def turn(checkpoints: Checkpoints, number: int, change) -> None:  # noqa: ANN001
    assert (await checkpoints.begin("s", number)).ok
    change()
    assert (await checkpoints.end("s", number)).ok


@pytest.mark.parametrize("how", ["rewritten", "deleted"])
async def test_a_rewritten_or_deleted_gitignore_deletes_nothing_of_the_users(
    project: Path, settings: Settings, how: str
) -> None:
    owned_repo(project)
    checkpoints = Checkpoints(project, settings)

    def agent() -> None:
        if how == "rewritten":
            (project / ".gitignore").write_text("node_modules/\n")
        else:
            (project / ".gitignore").unlink()
        (project / "new.txt").write_text("made by the agent\n")

    await turn(checkpoints, 1, agent)
    plan = await checkpoints.restore("s", 1, dry_run=True, force=False)
    assert plan.ok and plan.deleted == ["new.txt"] and plan.created_by == {"new.txt": 1}
    assert kept(plan) == [".env", "local.sqlite"]
    assert all(entry["reason"] == "ignored" and entry["turn"] == 1 for entry in plan.kept)
    done = await checkpoints.restore("s", 1, force=False)  # the user's files are not outside
    assert done.ok, done.error
    untouched(project)
    assert not (project / "new.txt").exists()
    assert (project / ".gitignore").read_text() == ".env\n*.sqlite\n"


async def test_a_file_un_ignored_through_info_exclude_stays(
    project: Path, settings: Settings
) -> None:
    git(project, "init", "-q")
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("notes/\n")
    (project / "notes").mkdir()
    (project / "notes" / "mine.md").write_text("the user's notes\n")
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, 1, lambda: (project / ".git" / "info" / "exclude").write_text(""))
    done = await checkpoints.restore("s", 1)
    assert done.ok and done.deleted == [] and kept(done) == ["notes/mine.md"]
    assert (project / "notes" / "mine.md").read_text() == "the user's notes\n"


async def test_a_subfolders_gitignore_deleted(project: Path, settings: Settings) -> None:
    git(project, "init", "-q")
    (project / "web").mkdir()
    (project / "web" / ".gitignore").write_text("cache/\n")
    (project / "web" / "cache").mkdir()
    (project / "web" / "cache" / "big.bin").write_bytes(b"cache" * 100)
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, 1, lambda: (project / "web" / ".gitignore").unlink())
    done = await checkpoints.restore("s", 1)
    assert done.ok and done.deleted == [] and done.created == ["web/.gitignore"]
    assert (project / "web" / "cache" / "big.bin").read_bytes() == b"cache" * 100


async def test_an_ignored_file_made_between_turns_then_un_ignored_stays(
    project: Path, settings: Settings
) -> None:
    owned_repo(project)
    (project / ".env").unlink()
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, 1, lambda: (project / "app.py").write_text("v2\n"))
    (project / ".env").write_bytes(SECRET)  # the user's, between the turns (still ignored)
    await turn(checkpoints, 2, lambda: (project / ".gitignore").write_text(""))
    done = await checkpoints.restore("s", 1)
    assert done.ok and ".env" not in done.deleted and ".env" in kept(done)
    untouched(project)


@pytest.mark.parametrize("how", ["shrunk", "deleted"])
async def test_a_file_over_the_size_limit_shrunk_or_deleted(
    project: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("ELELEM_CHECKPOINTS_MAX_FILE", "4K")
    big = b"id,value\n" + b"1,22222222\n" * 2000  # ~20 kB
    (project / "data.csv").write_bytes(big)
    checkpoints = Checkpoints(project, Settings.from_env())

    def agent() -> None:
        if how == "shrunk":
            (project / "data.csv").write_text("one line\n")
        else:
            (project / "data.csv").unlink()

    await turn(checkpoints, 1, agent)
    done = await checkpoints.restore("s", 1, force=True)
    assert done.ok and done.deleted == [] and kept(done) == ["data.csv"]
    assert done.kept[0]["reason"] == "too_big"
    if how == "shrunk":
        assert (project / "data.csv").read_text() == "one line\n"  # left as it is
    else:
        assert not (project / "data.csv").exists()  # never saved: cannot come back


async def test_a_nested_repository_the_agent_unmade_keeps_its_files(
    project: Path, settings: Settings
) -> None:
    lib = project / "vendor" / "lib"
    lib.mkdir(parents=True)
    git(lib, "init", "-q")
    (lib / "code.c").write_text("int x;\n")
    (project / "main.c").write_text("int main;\n")
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, 1, lambda: shutil.rmtree(lib / ".git"))
    done = await checkpoints.restore("s", 1)
    assert done.ok and done.deleted == [] and kept(done) == ["vendor/lib/code.c"]
    assert done.kept[0]["reason"] == "nested"
    assert (lib / "code.c").read_text() == "int x;\n"


async def test_the_users_files_are_lost_only_when_that_exact_list_is_confirmed(
    project: Path, settings: Settings
) -> None:
    (project / "a.txt").write_text("one\n")
    (project / "b.txt").write_text("one\n")
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, 1, lambda: (project / "a.txt").write_text("agent\n"))
    (project / "a.txt").write_text("the user's\n")
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.outside == ["a.txt"]
    (project / "b.txt").write_text("the user's too\n")  # after the plan was shown
    refused = await checkpoints.restore("s", 1, force=False, confirm=["a.txt"])
    assert refused.kind == "outside_changes" and (project / "a.txt").read_text() == "the user's\n"
    done = await checkpoints.restore("s", 1, force=False, confirm=["a.txt", "b.txt"])
    assert done.ok and (project / "a.txt").read_text() == "one\n"


async def test_a_cut_list_of_what_was_left_out_deletes_nothing(
    project: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from elelem_daemon.checkpoints import manifest

    monkeypatch.setattr(manifest, "MAX_ENTRIES", 1)  # .env and local.sqlite: one too many
    owned_repo(project)
    checkpoints = Checkpoints(project, settings)

    def agent() -> None:
        (project / ".gitignore").write_text("")
        (project / "new.txt").write_text("made by the agent\n")

    await turn(checkpoints, 1, agent)
    done = await checkpoints.restore("s", 1)
    assert done.ok and done.deleted == []
    assert {(k["path"], k["reason"]) for k in done.kept} >= {("new.txt", "unlisted")}
    untouched(project)
