"""Tools at scale: `glob`, `grep` and `list` on a generated tree of 100,000 files
(10,000 quick), each a stub `!tool` turn through the daemon, request → response.

The tree (bench/trees.py: made once, then cached; not in /dev/shm, which the file tools
refuse) is a git repository of 100 packages × 10 modules × 100 one-line Python files.
Baselines run on the same tree, alternating with the tool; for each tool the fastest
of the commands that do the same work (they look at the same files on disk, untracked
ones included, and print the same answer) is the baseline, and the note names it:

- glob `**/file042.py`: `find -path` (a walk, as the tool does),
  `git ls-files -co --exclude-standard` (git's index, and a walk for untracked files)
  or `git ls-files -co`, which lists the ignored files too, as glob does (the same
  work: on this tree, where nothing is ignored, the same answer);
- grep `return 4242$`: ripgrep (`rg -n`) when installed, `grep -rn`, or
  `git grep -n --untracked`;
- list, recursive: `ls -laR`, which is what the tool runs (what it prints: every file's
  metadata); `find -type f` (names only) is shown beside it, informative.

Medians of 5.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import time
from pathlib import Path

from .. import trees
from ..context import Context, initialize, open_session
from ..table import Row

TARGET = 1.5
ROUNDS = 5


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


def baselines(rg: str | None) -> dict[str, list[tuple[str, list[str]]]]:
    grep = [("rg -n", [rg, "-n", "return 4242$", "."])] if rg else []
    return {
        "glob": [
            ("find -path", ["find", ".", "-name", ".git", "-prune", "-o", "-type", "f",
                            "-path", "./*/file042.py", "-print"]),
            ("git ls-files -co --exclude-standard",
             ["git", "ls-files", "-co", "--exclude-standard", "*/file042.py"]),
            ("git ls-files -co", ["git", "ls-files", "-co", "*/file042.py"]),
        ],
        "grep": [
            *grep,
            ("grep -rn", ["grep", "-rn", "--exclude-dir=.git", "return 4242$", "."]),
            ("git grep -n --untracked", ["git", "grep", "-n", "--untracked", "return 4242$"]),
        ],
        "list": [("ls -laR", ["ls", "-laR", "--", "."])],
    }  # fmt: skip


async def run(ctx: Context) -> list[Row]:
    packages = ctx.n(100, 10)
    root = await asyncio.to_thread(trees.tree, packages)
    files = packages * 1000
    cases = [
        ("glob", {"pattern": "**/file042.py"}),
        ("grep", {"pattern": "return 4242$"}),
        ("list", {"recursive": True}),
    ]
    commands = baselines(shutil.which("rg"))
    conn = await ctx.daemon()
    rows = []
    try:
        await initialize(conn)
        session = await open_session(conn, root)
        for name, args in cases:
            await tool_ms(conn, session, name, args)  # warm-up: the page cache
            ours: list[float] = []
            theirs: dict[str, list[float]] = {what: [] for what, _ in commands[name]}
            for _ in range(ROUNDS):
                ours.append(await tool_ms(conn, session, name, args))
                for what, argv in commands[name]:
                    theirs[what].append(await command_ms(argv, root))
            medians = {what: statistics.median(times) for what, times in theirs.items()}
            what = min(medians, key=medians.__getitem__)
            value, base = statistics.median(ours), medians[what]
            others = "; ".join(f"{w}: {m:,.0f} ms" for w, m in medians.items() if w != what)
            rows.append(
                Row(
                    f"tool {name}, {files:,} files",
                    value,
                    "ms",
                    base,
                    target=f"≤ {TARGET:g}× baseline",
                    ok=value <= TARGET * base,
                    note=f"a stub `!tool` turn; baseline: {what}"
                    + (f" (fastest; {others})" if others else "")
                    + f"; medians of {ROUNDS}",
                )
            )
        names = [await command_ms(["find", ".", "-type", "f"], root) for _ in range(ROUNDS)]
        rows.append(
            Row(
                f"find -type f, {files:,} files",
                statistics.median(names),
                "ms",
                note="names only, beside `list` (informative)",
            )
        )
    finally:
        await conn.close()
    return rows
