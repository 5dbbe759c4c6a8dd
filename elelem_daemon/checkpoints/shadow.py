"""Shadow: the shadow git repository of one working directory.

It lives at `<state>/checkpoints/<hash of the folder's path>/` (a `cwd` file inside
names the folder), has the folder as its work tree, and its index mirrors the last
snapshot (`snapshot.take`). The callers name snapshots with refs (`set_refs`, `refs`);
`HEAD` follows the last one. Nothing here takes the lock: `Checkpoints` holds it
around every call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..safety import owned
from . import excludes, manifest
from .git import Git, GitError, nul, records
from .manifest import Manifest
from .running import folder_of
from .snapshot import Snapshot, take

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
LOCKS = (
    "index.lock", "index.buffers.lock", "index.buffers", "HEAD.lock", "packed-refs.lock",
    "refs/heads/main.lock",
)  # fmt: skip


def stale_ref_locks(refs: Path) -> None:
    """Remove the `<ref>.lock` files a killed git (a gc's pack-refs, an update-ref) left:
    git refuses to touch those refs while they exist."""
    for folder, _, files in os.walk(refs):
        for name in files:
            if name.endswith(".lock"):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))


def private(folder: Path, cwd: Path) -> None:
    """Create a folder's checkpoint folder, readable by the user alone (it holds copies
    of the folder's files), with the `cwd` file that names the folder."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    marker = folder / "cwd"
    if not os.path.lexists(marker):  # never written through a link (owned.py)
        owned.replace(marker, os.fsencode(str(cwd)) + b"\n")


@dataclass
class Head:
    commit: str
    tree: str
    manifest: Manifest


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
            owned.replace(self.dir / "config", CONFIG.encode())
            (self.dir / "info").mkdir(exist_ok=True)
            owned.replace(self.dir / "info" / "attributes", ATTRIBUTES.encode())
        named = excludes.read(self.dir / "cwd")
        if named != [str(self.cwd)]:
            raise GitError(f"{self.dir} holds the checkpoints of another folder: {named[:1]}")
        for name in LOCKS:  # we hold the flock: no git of ours is running here
            (self.dir / name).unlink(missing_ok=True)
        await asyncio.to_thread(stale_ref_locks, self.dir / "refs")
        os.utime(self.dir / "cwd")  # when this folder was last used, for pruning

    async def sync_excludes(self, nested: list[str]) -> None:
        text = await asyncio.to_thread(excludes.patterns, self.cwd, nested)
        if text != self._excludes:
            path = self.dir / "info" / "exclude"
            try:
                same = owned.read_text(path) == text
            except (OSError, UnicodeDecodeError):
                same = False
            if not same:
                owned.replace(path, text.encode())
            self._excludes = text

    def nested(self) -> list[str]:
        """The nested repositories found so far (and still there)."""
        listed = excludes.read(self.dir / "nested")
        return [p for p in listed if manifest.safe(p) and (self.cwd / p / ".git").exists()]

    def remember_nested(self, paths: list[str]) -> list[str]:
        known = self.nested()
        new = [p for p in paths if p not in known and "\n" not in p and manifest.safe(p)]
        if new:
            owned.replace(self.dir / "nested", "".join(f"{p}\n" for p in known + new).encode())
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
        """The tree as it is now, as a commit (no ref points at it yet)."""
        return await take(self, title, **meta)

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

    async def changed_each(self, spans: list[tuple[str, str]]) -> dict[str, list[str]]:
        """For each (old, new) pair, the paths that differ, keyed by `new`; one git call."""
        if not spans:
            return {}
        lines = "".join(f"{new} {old}\n" for old, new in spans)
        out = await self.git(
            "diff-tree", "--stdin", "-r", "-z", "--no-renames", "--no-ext-diff",
            "--no-textconv", "--name-status", stdin=lines.encode(),
        )  # fmt: skip
        found: dict[str, list[str]] = {new: [] for _, new in spans}
        current, expect_status = None, True
        for item in out.split(b"\0"):
            if not item:
                continue
            if expect_status and OID.fullmatch(item):
                current = item.decode()
                continue
            if expect_status:
                expect_status = False
            else:
                if current in found:
                    found[current].append(os.fsdecode(item))
                expect_status = True
        return found

    async def present(self, commit: str, paths: list[str]) -> set[str]:
        """Which of `paths` the commit's tree holds."""
        if not paths:
            return set()
        paths = paths[:1000]
        out = await self.git("ls-tree", "-r", "-z", "--name-only", commit, "--", *paths)
        return set(records(out))

    async def untrack(self, paths: list[str]) -> None:
        """Out of the index (GIT_LITERAL_PATHSPECS: each path as it is), left on disk."""
        if paths:
            await self.git(
                "rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-",
                "--pathspec-file-nul", stdin=nul(paths),
            )  # fmt: skip

    async def checkout(self, commit: str) -> None:
        """The index and the work tree become the commit's tree (files only): files the
        index holds and the tree does not are deleted; untracked files stay."""
        await self.git("read-tree", "-u", "--reset", commit)
        await self.git("update-ref", "HEAD", commit)

    async def gc(self, timeout: float) -> None:
        await self.git("gc", "--quiet", "--prune=now", timeout=timeout)
