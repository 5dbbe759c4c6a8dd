"""Start-up, step by step (issue 37): what each step of the daemon face's start costs,
from the spawn to the first `session/new` answer (a ready chat).

The daemon imports pygls in a thread while its loop starts, so import times taken inside
it overlap. The steps are therefore measured apart, in the same environment, each run:
- the interpreter: `python -c pass`;
- the imports: one process imports, in one thread and in the daemon's order, every module
  the daemon face imported up to that answer (the names read once from a run under
  `-X importtime`), and its `-X importtime` self times are summed by who ships each
  module: elelem's own; pygls with lsprotocol and the attrs/cattrs they build on; httpx
  and its transport (imported at the first request, not at start); the standard library
  and the rest;
- the work: the daemon's spawn → `session/new` time (without `-X importtime`) less the
  two rows above: elelem's start, `initialize`, the session, the pipes.
The CPU row is the daemon's own user + system time up to that answer (/proc). Medians.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from ..context import Context, initialize
from ..table import Row, median

OWNERS = {  # top-level module → who ships it; anything else is "the standard library and the rest"
    "elelem_daemon": "elelem's own modules",
    **dict.fromkeys(("pygls", "lsprotocol", "attrs", "attr", "cattrs"), "pygls and lsprotocol"),
    **dict.fromkeys(("httpx", "httpcore", "h11", "anyio", "sniffio", "idna", "certifi"), "httpx"),
}
REST = "the standard library and the rest"
ORDER = ("elelem's own modules", "pygls and lsprotocol", "httpx", REST)


def self_times(stderr: str) -> list[tuple[str, float]]:
    """(module, self milliseconds) from `-X importtime` lines, in their order."""
    found = []
    for line in stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and len(parts) == 3 and parts[0].strip().isdigit():
            found.append((parts[2].strip(), int(parts[0]) / 1000))
    return found


def by_owner(times: list[tuple[str, float]]) -> dict[str, float]:
    spent = dict.fromkeys(ORDER, 0.0)
    for module, ms in times:
        spent[OWNERS.get(module.split(".")[0], REST)] += ms
    return spent


def cpu_ms(pid: int) -> float | None:
    """The process's user + system CPU so far, from /proc (None where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def python_ms(ctx: Context, code: str, **env: str) -> tuple[float, str]:
    """Milliseconds of `python -c code` in the daemon's environment, and its stderr."""
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        ctx.daemon_python, "-c", code, env=ctx.env(**env), stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"python -c: exit {process.returncode}: {stderr[-300:]!r}")
    return (time.perf_counter() - start) * 1000, stderr.decode(errors="replace")


async def daemon_start(ctx: Context, **env: str) -> tuple[float, float | None, str]:
    """Spawn → `session/new` answered (ms), the daemon's CPU by then, its stderr."""
    start = time.perf_counter()
    conn = await ctx.daemon(**env)
    try:
        await initialize(conn)
        await conn.request("session/new", {"cwd": str(ctx.home)})
        total = (time.perf_counter() - start) * 1000
        cpu = cpu_ms(conn.proc.pid)
        stderr = Path(conn.log).read_text(errors="replace")
    finally:
        await conn.close()
    return total, cpu, stderr


def importer(modules: list[str]) -> str:
    """Code that imports `modules` in order, in one thread (one that fails is passed by),
    with `__import__`: `-X importtime` times that path, not `importlib.import_module`'s."""
    return (
        f"for name in {modules!r}:\n"
        "    try:\n        __import__(name)\n"
        "    except Exception:\n        pass\n"
    )


async def run(ctx: Context) -> list[Row]:
    runs = ctx.n(9, 2)
    _, _, traced = await daemon_start(ctx, PYTHONPROFILEIMPORTTIME="1")  # also the warm-up
    code = importer([module for module, _ in self_times(traced)])
    totals, cpus, interpreters = [], [], []
    imports: dict[str, list[float]] = {owner: [] for owner in ORDER}
    for _ in range(runs):
        interpreters.append((await python_ms(ctx, "pass"))[0])
        _, stderr = await python_ms(ctx, code, PYTHONPROFILEIMPORTTIME="1")
        for owner, ms in by_owner(self_times(stderr)).items():
            imports[owner].append(ms)
        total, cpu, _ = await daemon_start(ctx)
        totals.append(total)
        cpus += [cpu] if cpu is not None else []
    note = f"median of {runs}; load average {os.getloadavg()[0]:.1f}"
    step = "start-up step"
    work = median(
        [
            total - interpreter - sum(imports[owner][n] for owner in ORDER)
            for n, (total, interpreter) in enumerate(zip(totals, interpreters, strict=True))
        ]
    )
    own = median(imports[ORDER[0]]) + work
    rows = [
        Row(f"{step}: the interpreter (`python -c pass`)", median(interpreters), "ms", note=note)
    ]
    rows += [
        Row(
            f"{step}: imports, {owner}",
            median(imports[owner]),
            "ms",
            note=f"{note}; self times, one thread"
            + ("; 0: imported at the first request" if owner == "httpx" else ""),
        )
        for owner in ORDER
    ]
    rows += [
        Row(
            f"{step}: the work (elelem's start, initialize, the session, the pipes)",
            work,
            "ms",
            note=f"{note}; spawn → session/new less the rows above",
        ),
        Row(
            f"{step}: elelem's own part (its imports and the work)",
            own,
            "ms",
            note=f"{note}; about 50 ms in issue 37",
        ),
        Row(f"{step}: whole, spawn → session/new", median(totals), "ms", note=note),
    ]
    if cpus:
        rows.append(
            Row(
                f"{step}: the daemon's CPU up to session/new",
                median(cpus),
                "ms",
                note=f"{note}; user + system",
            )
        )
    return rows
