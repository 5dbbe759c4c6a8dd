"""`python -m bench [--quick] [--only a,b] [--markdown] [--readme] [--strict]`."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import shutil
import sys
import time
import traceback
from datetime import UTC, datetime

from .context import HERE, Context
from .figures import EXTRA, FIGURES
from .table import Row, markdown, render

README = HERE / "README.md"
BEGIN, END = "<!-- bench:table -->", "<!-- /bench:table -->"


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    cli.add_argument(
        "--quick",
        action="store_true",
        help="small sizes, for CI: a run fails only if a benchmark crashes",
    )
    cli.add_argument("--only", default="", help=f"comma-separated figures: {','.join(FIGURES)}")
    cli.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    cli.add_argument(
        "--readme",
        action="store_true",
        help="also record the table in bench/README.md (full runs only)",
    )
    cli.add_argument(
        "--daemon-python",
        default=sys.executable,
        help="the interpreter whose `elelem daemon` is measured (default: this one)",
    )
    cli.add_argument(
        "--peers",
        action="store_true",
        help="also measure codex app-server, codex-acp, claude-agent-acp (npm, network; not CI)",
    )
    cli.add_argument("--strict", action="store_true", help="exit 2 when a target does not hold")
    return cli


def machine() -> str:
    return (
        f"{os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable), "
        f"{platform.machine()}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


async def measure(ctx: Context, names: list[str], loads: list[float]) -> tuple[list[Row], bool]:
    rows: list[Row] = []
    crashed = False
    loads.append(os.getloadavg()[0])
    for name in names:
        print(f"bench: {name}…", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            rows += await {**FIGURES, **EXTRA}[name](ctx)
        except Exception:
            traceback.print_exc()
            crashed = True
            rows.append(Row(name, None, note="CRASHED: see stderr"))
        loads.append(os.getloadavg()[0])
        print(
            f"bench: {name} took {time.perf_counter() - start:.1f} s, load {loads[-1]:.1f}",
            file=sys.stderr,
        )
    return rows, crashed


def load(samples: list[float]) -> str:
    """The 1-minute load average over the run (at its start and after each figure): the
    machine may be shared, and the ratios mean more than the times under load."""
    return f"load average {min(samples):.1f}–{max(samples):.1f} (1 min, after each figure)"


def record(table: str, loads: str) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = f"{BEGIN}\nLatest full run, {stamp}, on {machine()}, {loads}:\n\n{table}\n{END}"
    text = README.read_text(encoding="utf-8") if README.exists() else f"{BEGIN}\n{END}\n"
    README.write_text(
        re.sub(f"{re.escape(BEGIN)}.*?{re.escape(END)}", lambda _: block, text, flags=re.S),
        encoding="utf-8",
    )


def main(argv: list[str] | None = None) -> int:
    options = parser().parse_args(argv)
    names = [n.strip() for n in options.only.split(",") if n.strip()] or list(FIGURES)
    if options.peers and "peers" not in names:
        names.append("peers")
    unknown = [n for n in names if n not in FIGURES and n not in EXTRA]
    if unknown:
        print(
            f"bench: unknown figure(s): {', '.join(unknown)}. Known: {', '.join(FIGURES)}",
            file=sys.stderr,
        )
        return 1
    ctx = Context(quick=options.quick, daemon_python=options.daemon_python)
    samples: list[float] = []
    try:
        rows, crashed = asyncio.run(measure(ctx, names, samples))
    finally:
        shutil.rmtree(ctx.home, ignore_errors=True)
    loads = load(samples)
    mode = "quick (small sizes; timings are not judged)" if ctx.quick else "full"
    print(f"\nelelem-daemon benchmark, {mode}, on {machine()}, {loads}\n")
    print(markdown(rows) if options.markdown else render(rows))
    judged = [row for row in rows if row.ok is not None]
    failed = [row.figure for row in judged if not row.ok]
    print(
        f"\n{len(judged) - len(failed)} of {len(judged)} targets hold"
        + (f"; not held: {', '.join(failed)}" if failed else "")
    )
    if options.readme and not ctx.quick and not crashed:
        record(markdown(rows), loads)
    if crashed:
        return 1
    return 2 if failed and options.strict and not ctx.quick else 0


if __name__ == "__main__":
    sys.exit(main())
