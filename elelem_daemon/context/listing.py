"""Listing: the files under a folder, as git or a walk gives them, sorted for completion.

Where a listing comes from (PathIndex in paths.py asks them in this order):
1. `git ls-files -co --exclude-standard -z` when cwd is in a git work tree: tracked
   and untracked files, with `.gitignore`, `.git/info/exclude` and the user's global
   excludes honoured; only the files under cwd, relative to it (`git_files`);
2. otherwise a breadth-first walk of cwd that skips `.git`, `.hg` and `.svn` and does
   not follow links to folders, for at most WALK_SECONDS seconds (`walk`).
Either way at most MAX_FILES paths (git's output is cut there, and after GIT_SECONDS),
relative to cwd with `/`; a name that is not UTF-8 is left out.

A `Listing` answers completions by bisecting its sorted paths; `scan_complete` answers
from one folder on disk, for a word outside any listing.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from bisect import bisect_left
from collections import deque
from pathlib import Path

MAX_FILES = 500_000
GIT_SECONDS = 10.0
WALK_SECONDS = 5.0
SCAN_ENTRIES = 10_000  # a folder read by scan_complete
COMPLETIONS = 20
SKIPPED = frozenset({".git", ".hg", ".svn"})


class Listing:
    """One listing: the sorted files, each folder's entries (worked out when first
    asked for, a bisect per entry), and the files by name."""

    def __init__(self, files: list[str], source: str, truncated: bool = False) -> None:
        self.files = sorted(files)
        self.source = source  # "git" or "walk"
        self.truncated = truncated
        low = [path[path.rfind("/") + 1 :].lower() for path in self.files]
        order = sorted(range(len(low)), key=low.__getitem__)
        self._names = [low[i] for i in order]  # file names, lower case, sorted
        self._named = [self.files[i] for i in order]  # their paths
        self._entries: dict[str, list[str]] = {}

    def under(self, folder: str) -> list[str]:
        """The files under folder (`src/`; `` for all), sorted."""
        low, high = self._span(folder)
        return self.files[low:high]

    def _span(self, folder: str) -> tuple[int, int]:
        if not folder:
            return 0, len(self.files)
        low = bisect_left(self.files, folder)
        return low, bisect_left(self.files, _past(folder), low)

    def children(self, folder: str) -> list[str]:
        """A folder's entries (`src/`; `` for cwd): names, folders with `/`, sorted. In
        sorted paths a subfolder's files are together: one bisect skips them all."""
        found = self._entries.get(folder)
        if found is not None:
            return found
        at, end = self._span(folder)
        found, size = [], len(folder)
        while at < end:
            rest = self.files[at][size:]
            slash = rest.find("/")
            if slash < 0:
                found.append(rest)
                at += 1
            else:
                found.append(rest[: slash + 1])
                at = bisect_left(self.files, _past(folder + rest[: slash + 1]), at, end)
        self._entries[folder] = found
        return found

    def complete(self, word: str, limit: int = COMPLETIONS, anywhere: bool = False) -> list[str]:
        """The folder's entries that start with the word's last part (folders end with
        `/`), sorted; then, `anywhere` and for a word without `/`, the files in any
        folder whose name starts with it (any case), by name."""
        folder, slash, stem = word.rpartition("/")
        prefix = f"{folder}/" if slash else ""
        names = self.children(prefix)
        found: list[str] = []
        at = bisect_left(names, stem)
        while at < len(names) and names[at].startswith(stem) and len(found) < limit:
            found.append(prefix + names[at])
            at += 1
        if anywhere and not slash and stem and len(found) < limit:
            key, seen = stem.lower(), set(found)
            at = bisect_left(self._names, key)
            while at < len(self._names) and self._names[at].startswith(key) and len(found) < limit:
                if self._named[at] not in seen:
                    found.append(self._named[at])
                at += 1
        return found


def _past(folder: str) -> str:
    """The least string after every path under folder (which ends with `/`)."""
    return folder[:-1] + chr(ord(folder[-1]) + 1)


def git_files(cwd: Path) -> tuple[list[str], bool, Path | None] | None:
    """The files git lists under cwd, whether the list was cut, and git's index file;
    None when cwd is in no git work tree (or there is no git)."""
    head = _run(["git", "rev-parse", "--is-inside-work-tree", "--git-path", "index"], cwd)
    if head is None or head[1] != 0 or not head[0].startswith(b"true\n"):
        return None
    index_path = head[0].split(b"\n")[1].decode("utf-8", "replace")
    git_index = (cwd / index_path) if index_path else None
    listed = _run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd, GIT_SECONDS)
    if listed is None or (listed[1] != 0 and not listed[2]):
        return None
    data, _, cut = listed
    names = data.split(b"\0")
    names.pop()  # what follows the last NUL: nothing, or a name cut short
    files = []
    for raw in names[:MAX_FILES]:
        try:
            files.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return files, cut or len(names) > MAX_FILES, git_index


def _run(args: list[str], cwd: Path, seconds: float = 5.0) -> tuple[bytes, int, bool] | None:
    """Output (at most MAX_FILES * 256 bytes), exit status, and whether it was cut
    (too long or too slow); None when the program cannot start."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    except OSError:
        return None
    assert proc.stdout is not None
    timer = threading.Timer(seconds, _kill, (proc,))
    timer.start()
    chunks, size, cap, cut = [], 0, MAX_FILES * 256, False
    try:
        while chunk := proc.stdout.read(1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                _kill(proc)
                cut = True
                break
        status = proc.wait()
    finally:
        timer.cancel()
        proc.stdout.close()
    cut = cut or status < 0  # killed by the timer
    return b"".join(chunks)[:cap], status, cut


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """The program and whatever it started (its own process group)."""
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass


def walk(cwd: Path) -> tuple[list[str], bool]:
    """Files under cwd, breadth first (see the module docstring); and whether cut."""
    deadline = time.monotonic() + WALK_SECONDS
    files: list[str] = []
    folders: deque[str] = deque([""])
    while folders:
        if len(files) >= MAX_FILES or time.monotonic() > deadline:
            return files[:MAX_FILES], True
        folder = folders.popleft()
        try:
            with os.scandir(cwd / folder if folder else cwd) as entries:
                for entry in entries:
                    if not _utf8(entry.name):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIPPED:
                            folders.append(f"{folder}{entry.name}/")
                    else:
                        files.append(f"{folder}{entry.name}")
        except OSError:
            continue
    return files, False


def scan_complete(cwd: Path, word: str, limit: int = COMPLETIONS) -> list[str]:
    """Entries of the one folder word names that complete it (folders end with `/`),
    sorted; at most SCAN_ENTRIES entries are read. For a word outside the index: an
    absolute path, `~`, `..`."""
    folder, slash, stem = word.rpartition("/")
    base = Path(folder).expanduser() if folder.startswith("~") else cwd / folder
    if slash and not folder:
        base = Path("/")
    names = []
    try:
        with os.scandir(base) as entries:
            for count, entry in enumerate(entries):
                if count >= SCAN_ENTRIES:
                    break
                if entry.name.startswith(stem) and _utf8(entry.name):
                    names.append(entry.name + ("/" if _is_dir(entry) else ""))
    except OSError:
        return []
    prefix = f"{folder}/" if slash else ""
    return [prefix + name for name in sorted(names)][:limit]


def outside(word: str) -> bool:
    """A word naming a path the index does not hold."""
    return word.startswith(("/", "~")) or ".." in word.split("/")


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
