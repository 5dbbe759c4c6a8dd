"""Checkpoint test helpers: full tree listings, the user's git, its repository's state."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

# Keep the user's git (and the tests' own git calls) away from any config of the machine.
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_OPTIONAL_LOCKS": "0",  # so that looking (git status) does not rewrite the index
    "GIT_AUTHOR_NAME": "user",
    "GIT_AUTHOR_EMAIL": "user@example.invalid",
    "GIT_COMMITTER_NAME": "user",
    "GIT_COMMITTER_EMAIL": "user@example.invalid",
}


def listing(root: Path, skip: tuple[str, ...] = (".git",)) -> dict[str, tuple]:
    """Every entry under root: a folder, a symlink and its target, or a file's full
    permission bits and the digest of its bytes."""
    found: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir",)
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[rel] = ("file", oct(info.st_mode & 0o7777), digest)
    return found


def run_git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV}
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=check
    )


def git(cwd: Path, *args: str) -> str:
    return run_git(cwd, *args).stdout


def repo_state(repo: Path) -> dict[str, object]:
    """Everything of a user's repository a checkpoint must leave as it was."""
    dot = repo / ".git"
    return {
        "status": git(repo, "-c", "core.fsmonitor=false", "status", "--porcelain", "-uall"),
        "stash": git(repo, "stash", "list"),
        "reflog": git(repo, "reflog", "--all"),
        "refs": git(repo, "for-each-ref"),
        "head": (dot / "HEAD").read_bytes(),
        "index": hashlib.sha256((dot / "index").read_bytes()).hexdigest(),
        "config": (dot / "config").read_bytes(),
        "files": sorted(str(p.relative_to(dot)) for p in dot.rglob("*")),
    }
