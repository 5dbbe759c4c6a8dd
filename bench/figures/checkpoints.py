"""Checkpoints: the checkpoint before a turn, on a 10,000-file tree with 10 changed files.

The tree (100 packages × 10 folders × 10 files of 10–1,000 lines) is a user's git
repository, committed. Each round changes 10 files, then times, alternately, the
user's own `git status --porcelain` (the baseline: the least any tool must do to see
what changed) and `Checkpoints.begin` (the value). The first checkpoint of the tree,
the space the shadow repository takes after the rounds and a `git gc`, and a restore
of the 10 files are reported beside it; then the same on a copy of this repository's
files. Everything lives in temporary folders (the real checkout is never written).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from elelem_daemon.checkpoints import Checkpoints, Settings
from elelem_daemon.checkpoints.snapshot import RACY

from ..context import ROOT, Context
from ..table import Row, median

TARGET_MS = 200.0
CHANGED = 10
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def synthetic(root: Path, files: int) -> list[Path]:
    rng = random.Random(17)
    paths = []
    for i in range(files):
        folder = root / f"pkg{i % 100:03d}" / f"sub{(i // 100) % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"f{i}.py"
        path.write_text(f"x = {i}\n" * rng.randint(10, 1000))
        paths.append(path)
    return paths


def this_repository(root: Path) -> list[Path]:
    """A copy of this checkout's tracked files (the tests' tree, not the real one)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    paths = []
    for name in filter(None, listed.decode().split("\0")):
        source, target = ROOT / name, root / name
        if source.is_file() and not source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            paths.append(target)
    return paths


def commit(root: Path) -> None:
    git(root, "init", "-q")
    git(root, "-c", "core.bigFileThreshold=1", "add", "-A")
    git(root, "commit", "-qm", "the user's work")


def size_mb(folder: Path) -> float:
    total = 0
    for base, _, files in os.walk(folder):
        for name in files:
            total += os.lstat(os.path.join(base, name)).st_blocks * 512
    return total / (1 << 20)


async def status_ms(root: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        "git", "status", "--porcelain", cwd=root, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    await proc.wait()
    return (time.perf_counter() - start) * 1000


async def measure(label: str, root: Path, paths: list[Path], rounds: int) -> list[Row]:
    state = Path(tempfile.mkdtemp(prefix="bench-checkpoints-"))
    try:
        checkpoints = Checkpoints(root, Settings(root=state / "checkpoints"))
        first = await checkpoints.begin("bench", 0)
        assert first.ok, first.error
        if checkpoints._upkeep:  # the gc the first checkpoint starts, before timing
            await checkpoints._upkeep
        rng = random.Random(3)
        ours, theirs = [], []
        for turn in range(1, rounds + 1):
            for path in rng.sample(paths, CHANGED):
                with path.open("a") as file:
                    file.write(f"# turn {turn}\n")
            if turn % 2:
                theirs.append(await status_ms(root))
            saved = await checkpoints.begin("bench", turn)
            assert saved.ok and saved.changed == CHANGED, saved
            ours.append(saved.ms)
            if not turn % 2:
                theirs.append(await status_ms(root))
        restores = []
        for turn in range(rounds, max(0, rounds - 3), -1):
            done = await checkpoints.restore("bench", turn)
            assert done.ok and len(done.restored) <= CHANGED, done
            restores.append(done.ms)
        await checkpoints.upkeep(prune=False, gc=True)
        space = size_mb(checkpoints.folder)
        await checkpoints.close()
    finally:
        shutil.rmtree(state, ignore_errors=True)
    value, base = median(ours), median(theirs)
    return [
        Row(
            f"checkpoint, {label}, {CHANGED} changed",
            value,
            "ms",
            base,
            target=f"≤ {TARGET_MS:g} ms",
            ok=value <= TARGET_MS,
            note=f"median of {rounds}; baseline: the user's `git status` on the same tree",
        ),
        Row(
            f"first checkpoint, {label}",
            first.ms,
            "ms",
            note="once per folder; a background `git gc` follows",
        ),
        Row(f"restore of {CHANGED} files, {label}", median(restores), "ms", note="median of 3"),
        Row(
            f"checkpoint space, {label}",
            space,
            "MB",
            size_mb(root) - size_mb(root / ".git"),
            note=f"shadow repository after {rounds + 1} checkpoints and a gc; baseline: the tree",
        ),
    ]


async def run(ctx: Context) -> list[Row]:
    files, rounds = ctx.n(10_000, 1_000), ctx.n(15, 5)
    rows = []
    for label, build in (
        (f"{files:,} files", lambda root: synthetic(root, files)),
        ("this repository", this_repository),
    ):
        root = Path(tempfile.mkdtemp(prefix="bench-tree-"))
        try:
            paths = await asyncio.to_thread(build, root)
            await asyncio.to_thread(commit, root)
            await asyncio.sleep(RACY)  # a tree made seconds ago is looked at twice
            name = label if "files" in label else f"this repository ({len(paths):,} files)"
            rows += await measure(name, root, paths, rounds)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return rows
