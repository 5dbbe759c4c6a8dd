"""Generated file trees for the figures, made fast and kept in a cache folder.

`tree(packages)` is a git repository of `packages` × 10 modules × 100 one-line Python
files (`pkgAAA/modB/fileCCC.py`, `def fN():\n    return N\n`), all in the index,
made by one Python process (no process per file) and committed to git with
`core.bigFileThreshold=1` (one pack, not one loose object per file). It lives in
`$XDG_CACHE_HOME/elelem-bench/trees/tools-<packages>-v<VERSION>` (not /dev/shm: the
file tools refuse /dev), keyed by its parameters, and a marker written last says it is
whole: a half-made tree (an interrupted run) is removed and made again. The figures
only read it. 100,000 files take about a minute to make on this disk, once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

VERSION = 1
MARKER = ".bench-tree-complete"


def cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elelem-bench" / "trees"


def text(n: int) -> bytes:
    return f"def f{n}():\n    return {n}\n".encode()


def make(root: Path, packages: int) -> None:
    for a in range(packages):
        for b in range(10):
            folder = root / f"pkg{a:03d}" / f"mod{b}"
            os.makedirs(folder)
            for c in range(100):
                n = (a * 10 + b) * 100 + c
                fd = os.open(folder / f"file{c:03d}.py", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
                try:
                    os.write(fd, text(n))
                finally:
                    os.close(fd)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (
        ["init", "-q"],
        ["-c", "core.bigFileThreshold=1", "add", "-A"],
        ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "tree"],
    ):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def tree(packages: int) -> Path:
    """The cached tree of `packages` × 1,000 files, made first when it is not whole."""
    root = cache() / f"tools-{packages}-v{VERSION}"
    if (root / ".git" / MARKER).exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    make(root, packages)
    (root / ".git" / MARKER).write_text(f"packages={packages}\n")
    return root
