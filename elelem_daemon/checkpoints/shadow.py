"""Shadow: the shadow git repository of one working directory, and its snapshots.

It lives at `<state>/checkpoints/<hash of the folder's path>/` (a `cwd` file inside
names the folder) and has the folder as its work tree. Its index mirrors the last
snapshot, so the next one only looks at what changed:

1. `git diff-files` lists the tracked files whose stat changed since the index saw
   them (an edit, a deletion, a `chmod` alone: it does not refresh, so it misses none);
2. `git ls-files -o --directory` lists untracked files and the folders holding no
   tracked file (git's untracked cache keeps this walk cheap); a new folder's files
   are listed by a second `ls-files`, a folder with its own `.git` becomes an exclude;
3. the listed files are looked at (`lstat`): one over the size limit is left out (and
   out of the index); permission bits go into the manifest;
4. `git add -A --pathspec-from-file` stages exactly those paths;
5. the empty folders are found among the collapsed ones (`manifest.empty_dirs`);
6. `write-tree`, then `commit-tree` with the manifest as the message and no parent:
   each snapshot is a root commit, so pruning a ref frees it.

The caller names the snapshot with refs (`set_refs`); `HEAD` always follows the last
snapshot. Nothing here takes the lock: `Checkpoints` holds it around every call.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from . import excludes, manifest
from .git import Git, GitError
from .manifest import Manifest

MANY = 2000  # new folders listed by name; more: the whole tree is listed
RACY = 2.0  # seconds: git compares ctimes to the second
BULK = 64  # staging this many files or more writes one pack, not loose objects
CONFIG = """[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tlogallrefupdates = false
\tuntrackedCache = true
[gc]
\tauto = 0
"""
# Every path as it is: no text, eol, filter, ident or encoding conversion.
ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding -diff -merge\n"
OID = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")
LOCKS = ("index.lock", "HEAD.lock", "packed-refs.lock", "refs/heads/main.lock")


def folder_of(root: Path, cwd: Path) -> Path:
    return root / hashlib.sha256(os.fsencode(cwd)).hexdigest()[:32]


def private(folder: Path, cwd: Path) -> None:
    """Create a folder's checkpoint folder, readable by the user alone (it holds copies
    of the folder's files), with the `cwd` file that names the folder."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    marker = folder / "cwd"
    if not marker.exists():
        marker.write_text(str(cwd) + "\n")


@dataclass
class Head:
    commit: str
    tree: str
    manifest: Manifest


@dataclass
class Snapshot:
    commit: str
    tree: str
    changed: int
    manifest: Manifest
    first: bool


def records(data: bytes) -> list[str]:
    return [os.fsdecode(item) for item in data.split(b"\0") if item]


def nul(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


class Shadow:
    def __init__(self, exe: str, cwd: Path, root: Path, timeout: float, max_file: int) -> None:
        self.cwd = cwd
        self.dir = folder_of(root, cwd)
        self.lock_file = self.dir.with_suffix(".lock")
        self.git = Git(exe, self.dir, cwd, timeout)
        self.max_file = max_file
        self.mask = manifest.umask()
        self._excludes: str | None = None

    # -- the repository ---------------------------------------------------------
    async def ensure(self) -> None:
        """Create the repository on first use; clear lock files a killed git left."""
        if not (self.dir / "HEAD").is_file():
            private(self.dir, self.cwd)
            await self.git("init", "--quiet", "--template=")
            (self.dir / "config").write_text(CONFIG)
            (self.dir / "info").mkdir(exist_ok=True)
            (self.dir / "info" / "attributes").write_text(ATTRIBUTES)
        named = excludes.read(self.dir / "cwd")
        if named != [str(self.cwd)]:
            raise GitError(f"{self.dir} holds the checkpoints of another folder: {named[:1]}")
        for name in LOCKS:  # we hold the flock: no git of ours is running here
            (self.dir / name).unlink(missing_ok=True)
        os.utime(self.dir / "cwd")  # when this folder was last used, for pruning

    async def sync_excludes(self, nested: list[str]) -> None:
        text = await asyncio.to_thread(excludes.patterns, self.cwd, nested)
        if text != self._excludes:
            path = self.dir / "info" / "exclude"
            if not path.is_file() or path.read_text() != text:
                path.write_text(text)
            self._excludes = text

    def nested(self) -> list[str]:
        """The nested repositories found so far (and still there)."""
        listed = excludes.read(self.dir / "nested")
        return [p for p in listed if manifest.safe(p) and (self.cwd / p / ".git").exists()]

    def remember_nested(self, paths: list[str]) -> list[str]:
        known = self.nested()
        new = [p for p in paths if p not in known and "\n" not in p and manifest.safe(p)]
        if new:
            (self.dir / "nested").write_text("".join(f"{p}\n" for p in known + new))
        return known + new

    async def head(self) -> Head | None:
        out = await self.git("cat-file", "--batch", stdin=b"HEAD\n")
        first, _, body = out.partition(b"\n")
        parts = first.split()
        if len(parts) != 3 or parts[1] != b"commit":
            return None  # "HEAD missing": no snapshot yet
        tree = body.split(b"\n", 1)[0].removeprefix(b"tree ").decode()
        return Head(parts[0].decode(), tree, Manifest.parse(body)[0])

    async def manifest_of(self, commit: str) -> tuple[Manifest, dict]:
        return Manifest.parse(await self.git("cat-file", "commit", commit))

    # -- a snapshot -------------------------------------------------------------
    async def snapshot(self, title: str, **meta: object) -> Snapshot:
        await self.sync_excludes(self.nested())
        # tracked files whose stat changed (content, mode, a chmod alone) or gone, and
        # what is untracked: both walks at once, they only read
        head, dirty_out, others = await asyncio.gather(
            self.head(), self.git("diff-files", "-z", "--name-only"), self._others()
        )
        dirty = records(dirty_out)
        modes = dict(head.manifest.modes) if head else {}
        # git sees a chmod alone by the ctime, to the second: files the last snapshot saw
        # change within a second of it are looked at again
        again = sorted(set(head.manifest.recheck if head else []) - set(dirty))
        entries = [(p, "tracked") for p in dirty] + [(p, "again") for p in again]
        untracked, folders, news = await self._untracked(*others)
        entries += [(p, "new") for p in untracked]
        add, drop, skipped, recent = await asyncio.to_thread(self._look, entries, modes)
        if news or set(drop) - set(skipped):  # the empty folders are known once the
            await self._stage(add, drop)  # new files are staged; a file that became a
            untracked, folders, _ = await self._untracked(*await self._others())  # folder
            more = await asyncio.to_thread(self._look, [(p, "new") for p in untracked], modes)
            await self._stage(more[0], more[1])  # hid its files until it left the index
            add, skipped, recent = add + more[0], skipped + more[2], recent + more[3]
            dirs, truncated = await asyncio.to_thread(manifest.empty_dirs, self.cwd, folders)
        else:
            _, (dirs, truncated) = await asyncio.gather(
                self._stage(add, drop), asyncio.to_thread(manifest.empty_dirs, self.cwd, folders)
            )
        state = Manifest(dirs, modes, sorted(set(skipped)), truncated, sorted(set(recent)))
        tree = (await self.git("write-tree")).strip().decode()
        message = state.message(title, **meta)
        commit = (await self.git("commit-tree", tree, "-F", "-", stdin=message)).strip().decode()
        return Snapshot(commit, tree, len(add) + len(drop), state, head is None)

    async def _untracked(
        self, files: list[str], folders: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        """The untracked files, with those of new folders (gitignore applied); the
        collapsed folders left; the new ones. Nested repositories become excludes."""
        news, nested = await asyncio.to_thread(self._survey, folders)
        await self._nest(nested)
        folders = [f for f in folders if f.rstrip("/") not in nested]
        if news:
            where = ["--", *news] if len(news) <= MANY else []
            listed = records(await self.git("ls-files", "-z", "-o", "--exclude-standard", *where))
            files = sorted({*files, *(p for p in listed if not p.endswith("/"))})
            await self._nest([p for p in listed if p.endswith("/")])
        return files, folders, news

    async def _stage(self, add: list[str], drop: list[str]) -> None:
        if drop:
            await self.git(
                "rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-",
                "--pathspec-file-nul", stdin=nul(drop),
            )  # fmt: skip
        if add:
            bulk = ("core.bigFileThreshold=1",) if len(add) >= BULK else ()
            await self.git(
                "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
                stdin=nul(add), settings=bulk,
            )  # fmt: skip

    async def _others(self) -> tuple[list[str], list[str]]:
        """Untracked files, and the folders holding no tracked file (collapsed by git)."""
        out = await self.git("ls-files", "-z", "-o", "--directory", "--exclude-standard")
        listed = records(out)
        return [p for p in listed if not p.endswith("/")], [p for p in listed if p.endswith("/")]

    def _survey(self, folders: list[str]) -> tuple[list[str], list[str]]:
        """The collapsed folders with something in them, and the nested repositories."""
        news, nested = [], []
        for folder in folders:
            path = self.cwd / folder
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

    async def _nest(self, found: list[str]) -> None:
        """Leave out these nested repositories from now on."""
        if found:
            known = await asyncio.to_thread(self.remember_nested, [p.rstrip("/") for p in found])
            await self.sync_excludes(known)

    def _look(
        self, entries: list[tuple[str, str]], modes: dict[str, int]
    ) -> tuple[list[str], list[str], list[str], list[str]]:
        """Split the listed paths (`tracked` and changed, `new`, or looked at `again`
        for their mode only): to stage, to drop from the index, too big to keep,
        changed within the last seconds; and note their permission bits in `modes`."""
        add, drop, skipped, recent = [], [], [], []
        lately = time.time() - RACY
        for path, why in entries:
            try:
                info = os.lstat(self.cwd / path)
            except OSError:
                if why != "again":  # (a deletion is listed by git anyway)
                    add.append(path)  # gone: staging it records the deletion
                    modes.pop(path, None)
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > self.max_file:
                if why != "again":
                    skipped.append(path)
                    if why == "tracked":
                        drop.append(path)
                    modes.pop(path, None)
                continue
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                # a folder where a file was (its files are listed as new), or a fifo,
                # a socket, a device: nothing git keeps
                if why == "tracked":
                    drop.append(path)
                modes.pop(path, None)
                continue
            if why != "again":
                add.append(path)
            if info.st_ctime >= lately:
                recent.append(path)
            if manifest.interesting(info.st_mode, self.mask):
                modes[path] = info.st_mode & 0o7777
            else:
                modes.pop(path, None)
        return add, drop, skipped, recent

    # -- refs -------------------------------------------------------------------
    async def set_refs(self, refs: dict[str, str]) -> None:
        lines = "".join(f"update {ref} {commit}\n" for ref, commit in refs.items())
        await self.git("update-ref", "--stdin", stdin=lines.encode())

    async def delete_refs(self, refs: list[str]) -> None:
        if refs:
            lines = "".join(f"delete {ref}\n" for ref in refs)
            await self.git("update-ref", "--stdin", stdin=lines.encode())

    async def refs(self, *prefixes: str) -> list[tuple[str, str, int]]:
        """(ref, commit, unix time of the commit) under the prefixes."""
        out = await self.git(
            "for-each-ref", "--format=%(refname)%00%(objectname)%00%(committerdate:unix)",
            *prefixes,
        )  # fmt: skip
        found = []
        for line in out.decode("utf-8", "replace").splitlines():
            ref, commit, when = line.split("\0")
            found.append((ref, commit, int(when or 0)))
        return found

    async def resolve(self, ref: str) -> str | None:
        code, out, _ = await self.git.run("rev-parse", "-q", "--verify", f"{ref}^{{commit}}")
        return out.strip().decode() if code == 0 else None

    # -- comparing and restoring -----------------------------------------------
    async def diff(self, old: str, new: str) -> list[tuple[str, str]]:
        """(status, path) from `old` to `new`: A added, D deleted, M/T changed."""
        out = await self.git(
            "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
            "--name-status", old, new,
        )  # fmt: skip
        items = records(out)
        return list(zip(items[::2], items[1::2], strict=True))

    async def changed_in(self, spans: list[tuple[str, str]]) -> set[str]:
        """The paths that differ in any (old, new) pair, in one git call."""
        if not spans:
            return set()
        lines = "".join(f"{new} {old}\n" for old, new in spans)  # a commit, then its "parent"
        out = await self.git(
            "diff-tree", "--stdin", "-r", "-z", "--no-renames", "--no-ext-diff",
            "--no-textconv", "--name-status", stdin=lines.encode(),
        )  # fmt: skip
        paths, expect_status = set(), True
        for item in out.split(b"\0"):
            if not item:
                continue
            if expect_status and OID.fullmatch(item):
                continue  # the header of the next pair
            if expect_status:
                expect_status = False
            else:
                paths.add(os.fsdecode(item))
                expect_status = True
        return paths

    async def present(self, commit: str, paths: list[str]) -> set[str]:
        """Which of `paths` the commit's tree holds."""
        if not paths:
            return set()
        paths = paths[:1000]
        out = await self.git("ls-tree", "-r", "-z", "--name-only", commit, "--", *paths)
        return set(records(out))

    async def checkout(self, commit: str) -> None:
        """The index and the work tree become the commit's tree (files only): files the
        index holds and the tree does not are deleted; untracked files stay."""
        await self.git("read-tree", "-u", "--reset", commit)
        await self.git("update-ref", "HEAD", commit)

    async def gc(self, timeout: float) -> None:
        await self.git("gc", "--quiet", "--prune=now", timeout=timeout)
