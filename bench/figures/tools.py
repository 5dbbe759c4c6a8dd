"""Tools at scale: `glob`, `grep` and `list` on a generated tree of 20,000 files
(10,000 quick), each a stub `!tool` turn through the daemon, request → response.

The tree (in the temporary folder, not /dev/shm: the file tools refuse /dev) is a
git repository of 100 packages × 10 modules × 100 one-line Python files. Baselines,
run on the same tree alternating with the tool: `git ls-files '*pattern*'` for glob,
ripgrep (`rg -n`) for grep when it is installed, else `grep -rn`, and `find . -type f`
for list. Medians of 3.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ..context import Context, initialize, open_session
from ..table import Row

TARGET = 1.5


def tree(root: Path, packages: int) -> None:
    for a in range(packages):
        for b in range(10):
            folder = root / f"pkg{a:03d}" / f"mod{b}"
            folder.mkdir(parents=True)
            for c in range(100):
                n = (a * 10 + b) * 100 + c
                (folder / f"file{c:03d}.py").write_text(f"def f{n}():\n    return {n}\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


async def tool_ms(conn, session: str, name: str, args: dict) -> float:  # noqa: ANN001
    text = f"!tool {name} {json.dumps(args)}"
    results: list[dict] = []
    conn.on_notify["event/result"] = results.append
    start = time.perf_counter()
    result = await conn.request("session/turn", {"sessionId": session, "text": text}, timeout=600)
    elapsed = (time.perf_counter() - start) * 1000
    if result.get("stopReason") != "end_turn" or not (results and results[0].get("ok")):
        raise RuntimeError(f"{name}: {result}, {str(results)[:300]}")
    return elapsed


async def command_ms(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=str(cwd), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    await process.communicate()
    return (time.perf_counter() - start) * 1000


async def run(ctx: Context) -> list[Row]:
    packages = ctx.n(20, 10)  # 100 (100,000 files) takes ~25 min to create on this disk
    rg = shutil.which("rg")
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as tmp:  # not /dev/shm: refused
        root = Path(tmp)
        await asyncio.to_thread(tree, root, packages)
        files = packages * 1000
        cases = [
            (
                "glob",
                {"pattern": "**/file042.py"},
                ["git", "ls-files", "*/file042.py"],
                "git ls-files",
            ),
            (
                "grep",
                {"pattern": "return 4242$"},
                [rg, "-n", "return 4242$", "."] if rg else ["grep", "-rn", "return 4242$", "."],
                "rg -n" if rg else "grep -rn (no ripgrep here)",
            ),
            ("list", {"recursive": True}, ["find", ".", "-type", "f"], "find -type f"),
        ]
        conn = await ctx.daemon()
        rows = []
        try:
            await initialize(conn)
            session = await open_session(conn, root)
            for name, args, argv, what in cases:
                await tool_ms(conn, session, name, args)  # warm-up: the page cache
                ours, theirs = [], []
                for _ in range(3):
                    ours.append(await tool_ms(conn, session, name, args))
                    theirs.append(await command_ms(argv, root))
                value, base = statistics.median(ours), statistics.median(theirs)
                rows.append(
                    Row(
                        f"tool {name}, {files:,} files",
                        value,
                        "ms",
                        base,
                        target=f"≤ {TARGET:g}× baseline",
                        ok=value <= TARGET * base,
                        note=f"a stub `!tool` turn; baseline: {what}; medians of 3",
                    )
                )
        finally:
            await conn.close()
    return rows
