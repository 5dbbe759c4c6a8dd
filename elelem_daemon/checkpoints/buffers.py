"""Buffers: what the agent left in the editor's buffers, in a turn's end state.

With an editor that applies changes to its buffers (`files/propose`), an agent change
may sit in a buffer, unsaved, when the turn ends: the disk does not hold it. The end
snapshot (`refs/elelem-end/<session>/<turn>`) then is the disk's snapshot with those
texts laid over it (`overlay`): a commit whose tree holds the buffers' texts and whose
one parent is the disk's snapshot (pruning the ref frees both). So:

- the turn's files (start to end) list a change left in a buffer;
- what changed outside the agent since the end (`outside`) is a path that differs
  from both what the agent left (the overlay) and what the disk held (the parent): the
  user saving the agent's buffer is not outside, nor a buffer never saved; their own
  edits saved on top of it are;
- a restore names the files an undone turn left in a buffer (`changed`), so the editor
  reloads them from the restored disk.

Only a file the disk snapshot holds as a regular file gets its buffer's text: not a
path outside the folder, ignored, too big, a symlink, a `.git` path or a file that
exists in a buffer only. At most MAX_BUFFERS files a turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from . import manifest
from .git import GitError, records

if TYPE_CHECKING:
    from .shadow import Shadow

MAX_BUFFERS = 200
REGULAR = ("100644", "100755")


def relative(cwd: Path, texts: dict[Path, str], max_file: int) -> dict[str, str]:
    """The texts by path relative to the folder; paths outside it, unsafe, or texts
    past the size limit are left out."""
    found: dict[str, str] = {}
    for path, text in texts.items():
        if len(found) >= MAX_BUFFERS:
            break
        if not isinstance(text, str) or len(text) > max_file:
            continue
        try:
            rel = Path(os.path.abspath(path)).relative_to(cwd).as_posix()
        except ValueError:
            continue
        data = text.encode("utf-8", "surrogatepass")
        if manifest.safe(rel) and len(data) <= max_file:
            found[rel] = text
    return found


def blob_id(data: bytes, length: int) -> str:
    """git's object id of a blob holding `data` (sha1 or sha256, as the repository's)."""
    hashed = hashlib.sha1 if length == 40 else hashlib.sha256
    return hashed(b"blob %d\0" % len(data) + data).hexdigest()


async def overlay(
    shadow: Shadow, commit: str, tree: str, texts: dict[str, str], message: bytes
) -> tuple[str, list[str]]:
    """The end commit: `commit` (the disk's snapshot) with the buffers' texts laid over
    its tree, and the paths whose text differs from the disk's; `commit` itself when
    none does."""
    if not texts:
        return commit, []
    out = await shadow.git("ls-tree", "-r", "-z", "--full-tree", tree, "--", *sorted(texts))
    entries: dict[str, tuple[str, str]] = {}
    for record in records(out):
        head, _, path = record.partition("\t")
        parts = head.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[0] in REGULAR and path in texts:
            entries[path] = (parts[0], parts[2])
    differ = []
    for path, (mode, oid) in sorted(entries.items()):
        data = texts[path].encode("utf-8", "surrogatepass")
        if blob_id(data, len(oid)) != oid:  # else the disk holds it (saved, or written)
            differ.append((path, mode, data))
    if not differ:
        return commit, []
    blobs = await write_blobs(shadow, [data for _, _, data in differ])
    lines = [(p, f"{mode} {blob}\t{p}\0") for (p, mode, _), blob in zip(differ, blobs, strict=True)]
    git = copy.copy(shadow.git)  # its own index: the shadow's mirrors the disk
    index = shadow.dir / "index.buffers"
    git.env = {**shadow.git.env, "GIT_INDEX_FILE": str(index)}
    try:
        await git("read-tree", tree)
        await git(
            "update-index", "-z", "--index-info", stdin="".join(line for _, line in lines).encode()
        )
        laid = (await git("write-tree")).strip().decode()
    finally:
        with contextlib.suppress(OSError):
            index.unlink()
    end = await shadow.git("commit-tree", laid, "-p", commit, "-F", "-", stdin=message)
    return end.strip().decode(), [path for path, _ in lines]


async def write_blobs(shadow: Shadow, texts: list[bytes]) -> list[str]:
    """The texts as blobs of the shadow, in one git: written to files of a private
    folder of the shadow first (`hash-object --stdin-paths`), removed after."""
    folder = shadow.dir / "buffers.tmp"
    await asyncio.to_thread(_write_files, folder, texts)
    try:
        names = "".join(f"{folder / str(i)}\n" for i in range(len(texts)))
        out = await shadow.git(
            "hash-object", "-w", "--no-filters", "--stdin-paths", stdin=names.encode()
        )
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)
    blobs = out.decode().split()
    if len(blobs) != len(texts):
        raise GitError(f"git hash-object gave {len(blobs)} ids for {len(texts)} texts")
    return blobs


def _write_files(folder: Path, texts: list[bytes]) -> None:
    shutil.rmtree(folder, ignore_errors=True)  # a killed run's (never followed: a link is removed)
    if folder.is_symlink():
        folder.unlink()
    folder.mkdir(mode=0o700)
    for i, data in enumerate(texts):
        fd = os.open(folder / str(i), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(data)


async def parents(shadow: Shadow, commits: list[str]) -> dict[str, str]:
    """The parent of each of `commits` that has one (an end laid over its disk's)."""
    if not commits:
        return {}
    out = await shadow.git("rev-list", "--no-walk=unsorted", "--parents", *commits)
    found = {}
    for line in out.decode().splitlines():
        ids = line.split()
        if len(ids) == 2:
            found[ids[0]] = ids[1]
    return found


async def changed(shadow: Shadow, ends: list[str]) -> set[str]:
    """The files these end commits hold from a buffer (not from the disk)."""
    laid = await parents(shadow, ends)
    each = await shadow.changed_each([(disk, end) for end, disk in laid.items()])
    return {path for paths in each.values() for path in paths}
