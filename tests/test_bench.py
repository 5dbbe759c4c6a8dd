"""The benchmark's command line (timings are not judged here; `bench/run --quick` runs
every figure in CI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_unknown_figure_is_named_with_the_known_ones() -> None:
    run = bench("--only", "coldstart,nope")
    assert run.returncode == 1
    assert "unknown figure(s): nope. Known: coldstart, throughput" in run.stderr


def test_quick_in_process_figures_print_one_markdown_table() -> None:
    run = bench("--quick", "--only", "dispatch,conversation", "--markdown")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "| figure | value | baseline | ratio | target | pass/fail | note |" in lines
    rows = [line for line in lines if line.startswith("| tool dispatch")]
    assert len(rows) == 2 and all(" µs |" in row for row in rows)
    assert any(line.startswith("| messages for a fetch, 10,000 kept |") for line in lines)
    assert "targets hold" in run.stdout
