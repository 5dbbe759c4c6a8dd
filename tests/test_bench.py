"""The benchmark's command line (timings are not judged here; `bench/run --quick` runs
every figure in CI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
    assert "unknown figure(s): nope. Known: coldstart, startup, throughput" in run.stderr


def test_quick_in_process_figures_print_one_markdown_table() -> None:
    run = bench("--quick", "--only", "dispatch,conversation", "--markdown")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "| figure | value | baseline | ratio | target | pass/fail | note |" in lines
    rows = [line for line in lines if line.startswith("| tool dispatch")]
    assert len(rows) == 2 and all(" µs |" in row for row in rows)
    assert any(line.startswith("| messages for a fetch, 10,000 kept |") for line in lines)
    assert "targets hold" in run.stdout


def test_a_refused_peer_session_is_not_a_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer that answers `session/new` with an error (no login) started no session: its
    time and memory are left out, with the reason, and no target compares with it."""
    monkeypatch.syspath_prepend(str(ROOT))
    from bench.figures.peers import Peer, Seen, rows_of

    async def never(_conn: object) -> None:  # not called: rows only
        raise AssertionError

    table = [Peer(name, never, never, never) for name in ("elelem daemon", "codex-acp")]
    refused = "not measured: session refused, error -32000: Authentication required"
    seen = {
        "elelem daemon": [Seen(200.0, 230.0, 40.0), Seen(210.0, 240.0, 41.0)],
        "codex-acp": [Seen(300.0, None, None, refused), Seen(310.0, None, None, refused)],
    }
    rows = {row.figure: row for row in rows_of(table, seen, 2)}
    assert rows["peer codex-acp: spawn → initialize"].value == 305.0
    session = rows["peer codex-acp: spawn → session"]
    assert session.value is None and session.verdict == "SKIP" and session.note == refused
    assert not any("codex-acp: RSS" in name for name in rows)
    assert not any("×" in name for name in rows)  # nothing to compare ours with
    assert rows["peer elelem daemon: spawn → session"].value == 235.0


def test_memory_is_judged_against_the_lightest_peer_that_started_a_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    from bench.figures.peers import against

    rows = against(
        {"elelem daemon": 450.0, "claude-agent-acp": 3500.0},
        {"elelem daemon": 45.0, "claude-agent-acp": 305.0, "codex app-server": 170.0},
        5,
    )
    memory = next(row for row in rows if row.figure.startswith("memory after a session"))
    assert memory.baseline == 170.0 and memory.ok is True
    ready = next(row for row in rows if "× claude-agent-acp" in row.figure)
    assert ready.ok is True and ready.baseline == 3500.0


def test_start_up_steps_sum_import_self_times_by_who_ships_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`-X importtime` lines: the header and a line of another shape are passed by; the
    self times (µs) are summed by owner, anything unknown under the standard library."""
    monkeypatch.syspath_prepend(str(ROOT))
    from bench.figures.startup import by_owner, importer, self_times

    stderr = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       500 |        500 |   elelem_daemon.base",
            "import time:    240000 |     261000 | lsprotocol.types",
            "import time:      3000 |       4000 |         attr._make",
            "import time:      1500 |       1500 |   typing",
            "WARNING something else on stderr | a | b",
            "import time:      2000 |       2500 | elelem_daemon.cli",
        ]
    )
    times = self_times(stderr)
    assert [module for module, _ in times] == [
        "elelem_daemon.base",
        "lsprotocol.types",
        "attr._make",
        "typing",
        "elelem_daemon.cli",
    ]
    assert by_owner(times) == {
        "elelem's own modules": 2.5,
        "pygls and lsprotocol": 243.0,
        "httpx": 0.0,
        "the standard library and the rest": 1.5,
    }
    namespace: dict[str, object] = {}
    exec(importer(["json", "no_such_module_here", "textwrap"]), namespace)  # noqa: S102
    import sys

    assert "textwrap" in sys.modules
