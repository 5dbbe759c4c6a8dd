"""`@` path completion on a generated tree of 100,000 files (10,000 quick).

The tree is a git repository: 100 packages × 10 modules × 100 files, all added to the
index, plus 10,000 files in a `.gitignore`d `build/` (they must not be offered). It is
made in /dev/shm when there is one (110,000 files on a shared disk take minutes to
create) and removed afterwards.
Completion is `Commands.complete` (the one completer; paths.py's index), called as
the daemon will call it for `session/complete`: `await index.ready()` once, then on
the event loop.

- first: a fresh index lists the tree (`git ls-files -co --exclude-standard`) and
  indexes it, then completes: reported on its own;
- after the first: 300 completions of `@` words, prefixes of every depth of paths in
  the tree and names found anywhere: p99 (target ≤ 50 ms) and median;
- while the listing is renewed (git's index file touched, so the next completion
  renews it in a background thread): 300 more, p99 (informative);
- baseline: `git ls-files -co --exclude-standard -z` alone on the same tree, median
  of 5: what a completer that listed on every key would pay at least.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from elelem_daemon.commands import Commands
from elelem_daemon.context import paths

from ..context import Context
from ..table import Row, median, percentile

TARGET_MS = 50.0


def tree(root: Path, packages: int, ignored: int) -> list[str]:
    """Make the repository; return its tracked paths."""
    files = []
    for a in range(packages):
        for b in range(10):
            folder = root / f"pkg{a:03d}" / f"mod{b}"
            folder.mkdir(parents=True)
            for c in range(100):
                name = f"pkg{a:03d}/mod{b}/file{c:03d}.py"
                (root / name).touch()
                files.append(name)
    (root / "build").mkdir()
    for n in range(ignored):
        (root / "build" / f"out{n:05d}.js").touch()
    (root / ".gitignore").write_text("build/\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return files


def words(files: list[str], count: int, seed: int = 7) -> list[str]:
    """`@` words a user types: a prefix of a path at any length, or a file's name."""
    rng = random.Random(seed)
    picked = []
    for _ in range(count):
        path = rng.choice(files)
        if rng.random() < 0.25:
            name = path.rpartition("/")[2]
            picked.append("@" + name[: rng.randint(1, len(name))])
        else:
            picked.append("@" + path[: rng.randint(0, len(path))])
    return picked


def completions_ms(commands: Commands, root: Path, typed: list[str]) -> list[float]:
    times = []
    for word in typed:
        start = time.perf_counter()
        commands.complete(f"explain {word}", root)
        times.append((time.perf_counter() - start) * 1000)
    return times


def git_ms(root: Path, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=root,
            check=True,
            capture_output=True,
        )
        times.append((time.perf_counter() - start) * 1000)
    return median(times)


async def run(ctx: Context) -> list[Row]:
    shm = Path("/dev/shm")
    scratch = Path(
        tempfile.mkdtemp(prefix="bench-complete-", dir=shm if shm.is_dir() else ctx.home)
    )
    try:
        return await measure(ctx, scratch / "tree")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def measure(ctx: Context, root: Path) -> list[Row]:
    packages = ctx.n(100, 10)
    size = packages * 1000
    root.mkdir()
    files = tree(root, packages, size // 10)
    commands = Commands()
    index = paths.index(root)
    start = time.perf_counter()
    await index.ready()
    first_items = commands.complete("explain @pkg0", root)
    first = (time.perf_counter() - start) * 1000
    assert first_items and index.listing is not None
    assert len(index.listing.files) == size + 1, len(index.listing.files)  # + .gitignore
    assert commands.complete("@build/", root) == []  # ignored files are not offered
    typed = words(files, ctx.n(300, 100))
    after = completions_ms(commands, root, typed)
    os.utime(root / ".git" / "index")  # the next completion renews the listing
    loads = index.loads
    renewing = completions_ms(commands, root, words(files, ctx.n(300, 100), seed=8))
    renewed = index.loads > loads or index._lock.locked()
    baseline = git_ms(root, 5)
    label = f"{size:,} files"
    p99 = percentile(after, 99)
    return [
        Row(
            f"complete an @ path, {label}: the first",
            first,
            "ms",
            baseline,
            note="lists (git ls-files) and indexes the tree, then completes; "
            "baseline: git ls-files alone",
        ),
        Row(
            f"complete an @ path, {label}: after the first, p99",
            p99,
            "ms",
            baseline,
            target=f"≤ {TARGET_MS:g} ms",
            ok=p99 <= TARGET_MS,
            note=f"median {median(after):.3f} ms of {len(after)}; "
            "baseline: git ls-files -co --exclude-standard",
        ),
        Row(
            f"complete an @ path, {label}: while the listing is renewed, p99",
            percentile(renewing, 99),
            "ms",
            note=f"median {median(renewing):.3f} ms of {len(renewing)}; "
            + ("renewed in a background thread" if renewed else "NOT renewed"),
        ),
    ]
