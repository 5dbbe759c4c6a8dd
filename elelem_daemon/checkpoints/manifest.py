"""Manifest: what a checkpoint records besides git's tree, and the safe file operations.

git keeps file contents, symlinks and the executable bit, not empty folders nor the
other permission bits. The manifest, kept as JSON in the checkpoint commit's message,
adds:

- `emptyDirs`: the folders with nothing in them (not ignored, outside nested repos);
- `modes`: the permission bits of files whose bits differ from what git would give
  them (`0666`/`0777` less the umask), e.g. a `0600` secret; a file's bits are read
  when a snapshot sees its stat change (an edit, a `chmod`, a new file), and carried
  forward from snapshot to snapshot;
- `skipped`: the files left out for their size;
- `ignored` (a checkpoint, the start of a turn): what was there and left out for the
  ignore rules, as git lists it (a folder ignored whole is one `name/` entry), and
  `nested`: the nested repositories (`name/`). A rewind never deletes what these held
  when the turn began (restore.py); `ignoredTruncated` says the list was cut;
- `recheck`: the files that changed within a second or two of the snapshot, which the
  next snapshot looks at again (git notices a `chmod` alone by the file's ctime, to the
  second, so a `chmod` in that same second would otherwise go unseen).

Every path is relative, `/`-separated, without `.`, `..` or a `.git` part; the
operations here walk to it one folder at a time with `O_NOFOLLOW`, so a symlink in the
tree never leads a restore outside the working directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VERSION = 1
MAX_ENTRIES = 10_000  # per list in one manifest
WALK_BUDGET = 20_000  # directory entries looked at to find empty folders
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Manifest:
    empty_dirs: list[str] = field(default_factory=list)
    modes: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    truncated: bool = False
    recheck: list[str] = field(default_factory=list)  # changed just before the snapshot
    ignored: list[str] | None = None  # left out for the ignore rules (None: not recorded)
    nested: list[str] = field(default_factory=list)  # nested repositories, `name/`
    ignored_truncated: bool = False

    def message(self, title: str, **meta: Any) -> bytes:
        """The commit message: a title line, a blank line, the JSON."""
        body = {
            "version": VERSION,
            **meta,
            "emptyDirs": sorted(self.empty_dirs)[:MAX_ENTRIES],
            "modes": {p: f"{m:04o}" for p, m in sorted(self.modes.items())[:MAX_ENTRIES]},
            "skipped": sorted(self.skipped)[:MAX_ENTRIES],
            "truncated": self.truncated
            or max(len(self.empty_dirs), len(self.modes), len(self.skipped)) > MAX_ENTRIES,
            "recheck": sorted(self.recheck)[:MAX_ENTRIES],
        }
        if self.ignored is not None:
            body["ignored"] = sorted(self.ignored)[:MAX_ENTRIES]
            body["nested"] = sorted(self.nested)[:MAX_ENTRIES]
            body["ignoredTruncated"] = self.ignored_truncated or (
                max(len(self.ignored), len(self.nested)) > MAX_ENTRIES
            )
        return f"{title}\n\n{json.dumps(body, ensure_ascii=False)}\n".encode()

    @classmethod
    def parse(cls, commit: bytes) -> tuple[Manifest, dict[str, Any]]:
        """From `git cat-file commit` output: the manifest and the other fields."""
        _, _, message = commit.partition(b"\n\n")
        _, _, body = message.partition(b"\n\n")
        try:
            data = json.loads(body)
            if not isinstance(data, dict):
                raise ValueError
        except ValueError:
            return cls(), {}
        dirs = [p for p in data.get("emptyDirs") or [] if safe(p)]
        modes = {}
        for path, mode in (data.get("modes") or {}).items():
            with contextlib.suppress(TypeError, ValueError):
                if safe(path):
                    modes[path] = int(mode, 8) & 0o7777
        skipped = [p for p in data.get("skipped") or [] if safe(p)]
        recheck = [p for p in data.get("recheck") or [] if safe(p)]
        found = cls(dirs, modes, skipped, bool(data.get("truncated")), recheck)
        if isinstance(data.get("ignored"), list):
            found.ignored = [p for p in data["ignored"] if safe(str(p).rstrip("/"))]
            found.nested = [p for p in data.get("nested") or [] if safe(str(p).rstrip("/"))]
            found.ignored_truncated = bool(data.get("ignoredTruncated"))
        return found, data


def safe(path: object) -> bool:
    """A path a manifest may name: relative, normal, no `.git` part, no NUL."""
    if not isinstance(path, str) or not path or "\0" in path or path.startswith("/"):
        return False
    return all(part not in ("", ".", "..", ".git") for part in path.split("/"))


def umask() -> int:
    """The process umask, read without changing it (Linux), else the usual 022."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def default_mode(mode: int, mask: int) -> int:
    """The bits git gives a file it writes: 0666 or 0777 (executable) less the umask."""
    return (0o777 if mode & stat.S_IXUSR else 0o666) & ~mask


def interesting(mode: int, mask: int) -> bool:
    return stat.S_ISREG(mode) and (mode & 0o7777) != default_mode(mode, mask)


# -- the tree, safely ---------------------------------------------------------------
@contextlib.contextmanager
def folder(root: Path, parts: list[str], create: bool = False) -> Iterator[int]:
    """A descriptor of root/parts, walked without following a symlink."""
    fd = os.open(root, DIR_FLAGS)
    try:
        for part in parts:
            try:
                inner = os.open(part, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                inner = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def make_dirs(root: Path, path: str) -> bool:
    """Create root/path and its parents; False when a file or a symlink is in the way."""
    try:
        with folder(root, path.split("/"), create=True):
            return True
    except OSError:
        return False


def remove_dir(root: Path, path: str) -> bool:
    """Remove root/path if it is an empty folder (never through a symlink)."""
    *parents, name = path.split("/")
    try:
        with folder(root, parents) as fd:
            os.rmdir(name, dir_fd=fd)
            return True
    except OSError:
        return False


def lstat(root: Path, path: str) -> os.stat_result | None:
    *parents, name = path.split("/")
    try:
        with folder(root, parents) as fd:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return None


def set_mode(root: Path, path: str, mode: int) -> bool:
    """chmod a regular file (a symlink or a folder is left alone)."""
    *parents, name = path.split("/")
    try:
        with folder(root, parents) as fd:
            if not stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                return False
            os.chmod(name, mode & 0o7777, dir_fd=fd)
            return True
    except OSError:
        return False


def empty_dirs(root: Path, entries: list[str], budget: int = WALK_BUDGET) -> tuple[list[str], bool]:
    """The empty folders at or under `entries` (the folders git lists as holding no
    tracked file), and whether the walk stopped at its budget."""
    found: list[str] = []
    todo = [e.rstrip("/") for e in entries if e.endswith("/") and safe(e.rstrip("/"))]
    while todo:
        path = todo.pop()
        try:
            with os.scandir(root / path) as listing:
                children = list(listing)
        except OSError:
            continue
        budget -= len(children) + 1
        if budget < 0:
            return sorted(found), True
        if not children:
            found.append(path)
        if any(child.name == ".git" for child in children):
            continue  # a nested repository: its folders are its own
        for child in children:
            if child.is_dir(follow_symlinks=False):
                todo.append(f"{path}/{child.name}")
    return sorted(found), False
