"""Snapshot: the working tree as it is now, as a commit of the shadow repository.

The shadow's index mirrors the last snapshot, so a snapshot only looks at what changed:

1. `git diff-files` lists the tracked files whose stat changed since the index saw
   them (an edit, a deletion, a `chmod` alone: it does not refresh, so it misses none);
   at the same time `git ls-files -o --directory` lists untracked files and the folders
   holding no tracked file (git's untracked cache keeps this walk cheap), and `HEAD`'s
   manifest is read;
2. a new folder's files are listed by a second `ls-files`; a folder with its own `.git`
   becomes an exclude;
3. the listed files are looked at (`lstat`, never beyond a symlink): one over the size
   limit is left out (and out of the index), a fifo or a device too; permission bits go
   into the manifest;
4. `git add -A --pathspec-from-file` stages exactly those paths (one pack, not loose
   objects, when there are many), while the empty folders are found among the
   collapsed ones;
5. `write-tree`, then `commit-tree` with the manifest as the message and no parent:
   each snapshot is a root commit, so pruning a ref frees it.

The start of a turn (`phase="start"`) also records what it leaves out for the ignore
rules (`git ls-files -o -i --directory`, run alongside step 1) and the nested
repositories: a rewind never deletes those (restore.py).
"""

from __future__ import annotations

import asyncio
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import manifest
from .git import nul, records
from .manifest import Manifest

if TYPE_CHECKING:
    from .shadow import Shadow

MANY = 2000  # new folders listed by name; more: the whole tree is listed
RACY = 2.0  # seconds: git compares ctimes to the second
BULK = 64  # staging this many files or more writes one pack, not loose objects


@dataclass
class Snapshot:
    commit: str
    tree: str
    changed: int  # paths staged or dropped
    manifest: Manifest
    first: bool  # the shadow had no snapshot before


async def take(shadow: Shadow, title: str, **meta: object) -> Snapshot:
    await shadow.sync_excludes(shadow.nested())
    start = meta.get("phase") == "start"
    head, dirty_out, listed, ignored = await asyncio.gather(
        shadow.head(),
        shadow.git("diff-files", "-z", "--name-only"),
        others(shadow),
        left_out(shadow) if start else asyncio.sleep(0, None),
    )
    dirty = records(dirty_out)
    modes = dict(head.manifest.modes) if head else {}
    # git sees a chmod alone by the ctime, to the second: the files the last snapshot
    # saw change within a second or two of it are looked at again
    again = sorted(set(head.manifest.recheck if head else []) - set(dirty))
    files, folders, news = await untracked(shadow, *listed)
    entries = [(p, "tracked") for p in dirty] + [(p, "again") for p in again]
    entries += [(p, "new") for p in files]
    add, drop, skipped, recent = await asyncio.to_thread(look, shadow, entries, modes)
    if news or set(drop) - set(skipped):
        # the empty folders are known once the new files are staged; and a file that
        # became a folder hides that folder's files until it leaves the index
        await stage(shadow, add, drop)
        files, folders, _ = await untracked(shadow, *await others(shadow))
        more = await asyncio.to_thread(look, shadow, [(p, "new") for p in files], modes)
        await stage(shadow, more[0], more[1])
        add, skipped, recent = add + more[0], skipped + more[2], recent + more[3]
        dirs, truncated = await asyncio.to_thread(manifest.empty_dirs, shadow.cwd, folders)
    else:
        _, (dirs, truncated) = await asyncio.gather(
            stage(shadow, add, drop), asyncio.to_thread(manifest.empty_dirs, shadow.cwd, folders)
        )
    state = Manifest(dirs, modes, sorted(set(skipped)), truncated, sorted(set(recent)))
    if ignored is not None:
        nested = await asyncio.to_thread(shadow.nested)
        state.nested = sorted({n.rstrip("/") + "/" for n in nested})
        state.ignored = sorted(set(ignored) - set(state.nested))
    tree = (await shadow.git("write-tree")).strip().decode()
    message = state.message(title, **meta)
    commit = (await shadow.git("commit-tree", tree, "-F", "-", stdin=message)).strip().decode()
    return Snapshot(commit, tree, len(add) + len(drop), state, head is None)


async def others(shadow: Shadow) -> tuple[list[str], list[str]]:
    """Untracked files, and the folders holding no tracked file (collapsed by git)."""
    out = await shadow.git("ls-files", "-z", "-o", "--directory", "--exclude-standard")
    listed = records(out)
    return [p for p in listed if not p.endswith("/")], [p for p in listed if p.endswith("/")]


async def left_out(shadow: Shadow) -> list[str]:
    """What is there and ignored (a folder ignored whole as one `name/`), any `.git`
    aside."""
    out = await shadow.git("ls-files", "-z", "-o", "-i", "--directory", "--exclude-standard")
    return [p for p in records(out) if p.rstrip("/").rpartition("/")[2] != ".git"]


async def untracked(
    shadow: Shadow, files: list[str], folders: list[str]
) -> tuple[list[str], list[str], list[str]]:
    """The untracked files, with those of new folders (gitignore applied); the
    collapsed folders left; the new ones. Nested repositories become excludes."""
    news, nested = await asyncio.to_thread(survey, shadow.cwd, folders)
    await nest(shadow, nested)
    folders = [f for f in folders if f.rstrip("/") not in nested]
    if news:
        where = ["--", *news] if len(news) <= MANY else []
        found = records(await shadow.git("ls-files", "-z", "-o", "--exclude-standard", *where))
        files = sorted({*files, *(p for p in found if not p.endswith("/"))})
        await nest(shadow, [p for p in found if p.endswith("/")])
    return files, folders, news


def survey(cwd: Path, folders: list[str]) -> tuple[list[str], list[str]]:
    """The collapsed folders with something in them, and the nested repositories."""
    news, nested = [], []
    for folder in folders:
        path = cwd / folder
        if (path / ".git").exists():
            nested.append(folder.rstrip("/"))
            continue
        try:
            with os.scandir(path) as listing:
                if next(listing, None) is not None:
                    news.append(folder)
        except OSError:
            continue
    return news, nested


async def nest(shadow: Shadow, found: list[str]) -> None:
    """Leave out these nested repositories from now on."""
    if found:
        known = await asyncio.to_thread(shadow.remember_nested, [p.rstrip("/") for p in found])
        await shadow.sync_excludes(known)


async def stage(shadow: Shadow, add: list[str], drop: list[str]) -> None:
    if drop:
        await shadow.git(
            "rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-",
            "--pathspec-file-nul", stdin=nul(drop),
        )  # fmt: skip
    if add:
        bulk = ("core.bigFileThreshold=1",) if len(add) >= BULK else ()
        await shadow.git(
            "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
            stdin=nul(add), settings=bulk,
        )  # fmt: skip


def look(
    shadow: Shadow, entries: list[tuple[str, str]], modes: dict[str, int]
) -> tuple[list[str], list[str], list[str], list[str]]:
    """Split the listed paths (`tracked` and changed, `new`, or looked at `again` for
    their mode only): to stage, to drop from the index, too big to keep, changed within
    the last seconds; and note their permission bits in `modes`."""
    add, drop, skipped, recent = [], [], [], []
    lately = time.time() - RACY
    real = Folders(shadow.cwd)
    for path, why in entries:
        if not real(path.rpartition("/")[0]):
            # a folder of it became a symlink (or a file): gone from here, and git
            # stages no path beyond a symlink, so it leaves the index
            if why == "tracked":
                drop.append(path)
            modes.pop(path, None)
            continue
        try:
            info = os.lstat(shadow.cwd / path)
        except OSError:
            if why != "again":  # (a deletion is listed by git anyway)
                add.append(path)  # gone: staging it records the deletion
                modes.pop(path, None)
            continue
        big = stat.S_ISREG(info.st_mode) and info.st_size > shadow.max_file
        if big or not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            # too big; or a folder where a file was (its files are listed as new), a
            # fifo, a socket, a device: nothing git keeps
            if why != "again":
                skipped += [path] if big else []
                drop += [path] if why == "tracked" else []
                modes.pop(path, None)
            continue
        if why != "again":
            add.append(path)
        if info.st_ctime >= lately:
            recent.append(path)
        if manifest.interesting(info.st_mode, shadow.mask):
            modes[path] = info.st_mode & 0o7777
        else:
            modes.pop(path, None)
    return add, drop, skipped, recent


class Folders:
    """Whether a folder of the tree is a real folder from the top down (no symlink on
    the way), asked once per folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.known: dict[str, bool] = {"": True}

    def __call__(self, folder: str) -> bool:
        chain = []  # the folder and its parents not yet known, deepest first
        while folder not in self.known:
            chain.append(folder)
            folder = folder.rpartition("/")[0]
        ok = self.known[folder]
        for name in reversed(chain):
            if ok:
                try:
                    ok = stat.S_ISDIR(os.lstat(self.root / name).st_mode)
                except OSError:
                    ok = False
            self.known[name] = ok
        return ok
