"""config.toml nested past CONFIG_DEPTH is a clear error, never a RecursionError
(issue 36): `elelem ask` says so in one line, and a turn goes on without the file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from elelem_daemon.base.config import config_table
from elelem_daemon.base.errors import ElelemError
from elelem_daemon.turns.usage import configured_prices


def nested(depth: int) -> str:
    return "[prices.x]\ninput = 1\noutput = 2\n[deep]\na = " + "[" * depth + "]" * depth + "\n"


@pytest.fixture
def config(isolated_home: Path) -> Path:
    folder = isolated_home / ".config" / "elelem"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "config.toml"


@pytest.mark.parametrize("depth", [40, 5000])
def test_a_deeply_nested_array_is_a_clear_error(config: Path, depth: int) -> None:
    config.write_text(nested(depth))
    with pytest.raises(ElelemError) as raised:
        config_table(os.environ)
    assert str(raised.value) == (
        f"cannot read {config}: tables and arrays nested deeper than 32 levels"
    )
    assert configured_prices() == {}  # each turn's price lookup: a log line, no failure


def test_nesting_within_the_bound_is_read(config: Path) -> None:
    config.write_text(nested(30))
    assert config_table(os.environ)["prices"]["x"] == {"input": 1, "output": 2}


def test_elelem_ask_says_it_in_one_line_and_exits_1(config: Path, isolated_home: Path) -> None:
    config.write_text(nested(5000))
    env = {
        **os.environ,
        "HOME": str(isolated_home),
        "XDG_CONFIG_HOME": str(isolated_home / ".config"),
        "XDG_STATE_HOME": str(isolated_home / ".local" / "state"),
        "XDG_DATA_HOME": str(isolated_home / ".local" / "share"),
        "XDG_CACHE_HOME": str(isolated_home / ".cache"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "ask", "hi"],
        env=env,
        cwd=isolated_home,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"elelem: cannot read {config}: tables and arrays nested deeper than 32 levels\n"
    )
    turn = subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "ask", "-p", "stub", "!echo ok"],
        env=env,
        cwd=isolated_home,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert turn.returncode == 0 and "Traceback" not in turn.stderr
    assert turn.stdout.strip().endswith("ok")
