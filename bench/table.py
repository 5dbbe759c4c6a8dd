"""Table: one row per figure (value, baseline, ratio, target, pass/fail), and the stats."""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass
class Row:
    figure: str
    value: float | None
    unit: str = ""
    baseline: float | None = None
    target: str = ""
    ok: bool | None = None  # None: no target (informative) or not measured
    note: str = ""
    ratio: float | None = None  # set when the row compares with a baseline

    def __post_init__(self) -> None:
        if self.ratio is None and self.value is not None and self.baseline:
            self.ratio = self.value / self.baseline

    @property
    def verdict(self) -> str:
        if self.value is None:
            return "SKIP"
        return {True: "pass", False: "FAIL", None: "-"}[self.ok]

    def cells(self) -> list[str]:
        return [
            self.figure,
            amount(self.value, self.unit),
            amount(self.baseline, self.unit),
            f"{self.ratio:.2f}x" if self.ratio is not None else "",
            self.target,
            self.verdict,
            self.note,
        ]


HEADERS = ["figure", "value", "baseline", "ratio", "target", "pass/fail", "note"]


def amount(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}".strip()


def render(rows: list[Row]) -> str:
    """A plain text table for the terminal."""
    grid = [HEADERS, *(row.cells() for row in rows)]
    widths = [max(len(line[i]) for line in grid) for i in range(len(HEADERS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in grid
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown(rows: list[Row]) -> str:
    """The same table in Markdown, for bench/README.md."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for row in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row.cells()) + " |")
    return "\n".join(lines)


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100): p99 of 100 samples is the 99th smallest."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil
    return ordered[int(rank) - 1]
