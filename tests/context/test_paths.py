"""Completing `@` paths: git's list (`.gitignore` honoured) or a bounded walk, cached,
renewed in the background, never blocking the event loop."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from support.loop import ticking

from elelem_daemon.commands import Commands
from elelem_daemon.context import listing as sources
from elelem_daemon.context import paths
from elelem_daemon.context.listing import Listing
from elelem_daemon.context.paths import PathIndex


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    for name in ("src/app.py", "src/api/routes.py", "src/apps.md", "README.md", "build/out.js"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "debug.log").write_text("")
    git(tmp_path, "add", "src/app.py", "README.md", ".gitignore")
    return tmp_path  # src/api/routes.py and src/apps.md stay untracked


def until(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_git_lists_tracked_and_untracked_files_not_ignored_ones(repo: Path) -> None:
    listing = PathIndex(repo).wait()
    assert listing.source == "git"
    assert listing.files == [
        ".gitignore",
        "README.md",
        "src/api/routes.py",
        "src/app.py",
        "src/apps.md",
    ]


def test_a_folder_not_in_git_is_walked_without_vcs_folders(tmp_path: Path) -> None:
    for name in ("a/b.txt", "c.txt", ".git/HEAD", ".hidden/x", "d/.svn/entries"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    listing = PathIndex(tmp_path).wait()
    assert listing.source == "walk"
    assert listing.files == [".hidden/x", "a/b.txt", "c.txt", "loop"]  # a link, not followed


def test_completion_of_a_folders_entries(repo: Path) -> None:
    index = PathIndex(repo)
    assert index.complete("src/ap") == ["src/api/", "src/app.py", "src/apps.md"]
    assert index.complete("") == [".gitignore", "README.md", "src/"]
    assert index.complete("bu") == []  # ignored
    assert index.complete("src/api/") == ["src/api/routes.py"]
    assert index.complete("nowhere/x") == []


def test_an_at_word_also_finds_files_by_name_anywhere(repo: Path) -> None:
    assert paths.complete_word("@src/ap", repo) == ["@src/api/", "@src/app.py", "@src/apps.md"]
    assert paths.complete_word("@rou", repo) == ["@src/api/routes.py"]
    assert paths.complete_word("@READ", repo) == ["@README.md"]
    assert paths.complete_word("@app", repo) == ["@src/app.py", "@src/apps.md"]
    assert paths.complete_word("rou", repo) == []  # a bare word: its folder's entries only
    assert paths.complete_word("@/etc/pass", repo) == []  # no mention outside the cwd
    assert paths.complete_word("@../x", repo) == []


def test_commands_complete_is_the_one_completer(repo: Path) -> None:
    commands = Commands()
    assert commands.complete("explain @src/ap", repo) == [
        "@src/api/",
        "@src/app.py",
        "@src/apps.md",
    ]
    assert commands.complete("look at src/a", repo) == ["src/api/", "src/app.py", "src/apps.md"]


def test_a_bare_absolute_word_completes_from_its_folder(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "xy.txt").write_text("")
    assert paths.complete_word(f"{tmp_path}/x", tmp_path / "x") == [
        f"{tmp_path}/x/",
        f"{tmp_path}/xy.txt",
    ]


def test_at_most_twenty(tmp_path: Path) -> None:
    for n in range(30):
        (tmp_path / f"f{n:02d}").write_text("")
    assert PathIndex(tmp_path).complete("f") == [f"f{n:02d}" for n in range(20)]


def test_names_that_are_not_utf8_are_left_out(tmp_path: Path) -> None:
    os.close(os.open(os.fsencode(tmp_path) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY))
    (tmp_path / "good.txt").write_text("")
    assert PathIndex(tmp_path).wait().files == ["good.txt"]
    git(tmp_path, "init", "-q")
    assert PathIndex(tmp_path).wait().files == ["good.txt"]


# -- fresh and fast -----------------------------------------------------------------------
def test_a_listing_is_reused_until_git_index_changes(repo: Path) -> None:
    index = PathIndex(repo, ttl=3600)
    index.complete("src/")
    index.complete("src/a")
    assert index.loads == 1
    (repo / "src" / "new.py").write_text("")
    assert index.complete("src/n") == []  # untracked, and the index did not change: not seen yet
    time.sleep(0.01)
    git(repo, "add", "src/new.py")
    assert index.complete("src/n") == []  # stale: answered at once, renewed in the background
    until(lambda: index.loads == 2)
    assert index.complete("src/n") == ["src/new.py"]


def test_a_listing_is_renewed_after_its_time(tmp_path: Path) -> None:
    now = [0.0]
    index = PathIndex(tmp_path, ttl=5, clock=lambda: now[0])
    assert index.complete("a") == []
    (tmp_path / "a.txt").write_text("")
    now[0] = 4.9
    assert index.complete("a") == [] and index.loads == 1
    now[0] = 5.0
    index.complete("a")
    until(lambda: index.loads == 2)
    assert index.complete("a") == ["a.txt"]


def test_a_slow_listing_is_trusted_longer(tmp_path: Path, monkeypatch) -> None:
    now = [0.0]
    real = sources.walk

    def slow_walk(cwd: Path):
        now[0] += 10.0  # this listing takes 10 s
        return real(cwd)

    monkeypatch.setattr(sources, "walk", slow_walk)
    index = PathIndex(tmp_path, ttl=5, clock=lambda: now[0])
    index.wait()
    assert index.trusted() == 40.0
    now[0] += 39.0
    assert index.fresh()
    now[0] += 1.0
    assert not index.fresh()


async def test_on_the_event_loop_the_first_completion_does_not_wait(
    repo: Path, monkeypatch
) -> None:
    started = []

    def slow_git(cwd: Path):
        started.append(cwd)
        time.sleep(0.5)
        return real(cwd)

    real = sources.git_files
    monkeypatch.setattr(sources, "git_files", slow_git)
    index = PathIndex(repo)
    begin = time.monotonic()
    first = index.complete("src/ap")  # from the folder on disk, for now
    assert time.monotonic() - begin < 0.4
    assert first == ["src/api/", "src/app.py", "src/apps.md"]
    await index.ready()
    assert index.complete("bu") == [] and index.loads == 1 and len(started) == 1


async def test_ready_lists_in_a_thread(repo: Path) -> None:
    index = PathIndex(repo)
    async with ticking() as ticks:
        listing = await index.ready()
    assert listing.source == "git" and ticks.count > 0


def test_an_index_is_shared_per_folder(tmp_path: Path) -> None:
    assert paths.index(tmp_path) is paths.index(str(tmp_path / "."))
    assert paths.index(tmp_path) is not paths.index(tmp_path / "..")


# -- bounds -------------------------------------------------------------------------------
def test_git_output_is_cut_at_the_file_cap(repo: Path, monkeypatch) -> None:
    monkeypatch.setattr(sources, "MAX_FILES", 2)
    listing = PathIndex(repo).wait()
    assert listing.truncated and len(listing.files) == 2


def test_a_walk_stops_at_its_time(tmp_path: Path, monkeypatch) -> None:
    for n in range(50):
        (tmp_path / f"d{n}").mkdir()
        (tmp_path / f"d{n}" / "f").write_text("")
    monkeypatch.setattr(sources, "WALK_SECONDS", 0.0)
    listing = PathIndex(tmp_path).wait()
    assert listing.truncated and listing.files == []


def test_a_git_that_hangs_is_killed(repo: Path, tmp_path_factory, monkeypatch) -> None:
    shim = tmp_path_factory.mktemp("bin")
    real = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    hang = 'case "$1" in ls-files) printf "a\\0b"; exec sleep 30;; esac'
    (shim / "git").write_text(f'#!/bin/sh\n{hang}\nexec {real} "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}:{os.environ['PATH']}")
    monkeypatch.setattr(sources, "GIT_SECONDS", 0.3)
    begin = time.monotonic()
    listing = PathIndex(repo).wait()
    assert time.monotonic() - begin < 10
    assert listing.source == "git" and listing.truncated and listing.files == ["a"]


def test_listing_under_a_folder() -> None:
    listing = Listing(["a/b", "a/c/d", "ab", "a0", "b"], "walk")
    assert listing.under("a/") == ["a/b", "a/c/d"]
    assert listing.under("") == ["a/b", "a/c/d", "a0", "ab", "b"]
    assert listing.children("") == ["a/", "a0", "ab", "b"]
    assert listing.children("a/") == ["b", "c/"]
    assert listing.children("a/c/") == ["d"] and listing.children("x/") == []


def test_entries_in_path_order_whatever_the_names() -> None:
    files = ["s/app.py", "s/app/x", "s/app-y/z", "s/app0", "s/b/c/d", "s/b/e", "s/b.md"]
    listing = Listing(files, "walk")
    assert listing.children("s/") == ["app-y/", "app.py", "app/", "app0", "b.md", "b/"]
    assert listing.complete("s/app") == ["s/app-y/", "s/app.py", "s/app/", "s/app0"]
