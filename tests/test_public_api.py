"""The public surface for plugin authors: `elelem_daemon.__all__` is exactly what the
package exports, each name from the module that defines it, and importing the package
imports nothing else (the daemon's start-up)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import elelem_daemon

DOCS = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"


def test_all_is_sorted_and_is_what_the_package_exports() -> None:
    names = elelem_daemon.__all__
    assert names == sorted(names)
    assert set(names) == {*elelem_daemon._WHERE, "__version__"}
    for name, where in elelem_daemon._WHERE.items():
        value = getattr(elelem_daemon, name)
        assert (value.__name__, value.__module__) == (name, f"elelem_daemon.{where}")
    with pytest.raises(AttributeError):
        elelem_daemon.Nothing  # noqa: B018


def test_every_public_name_is_in_the_plugin_docs() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert [n for n in elelem_daemon.__all__ if f"`{n}`" not in text] == []


def test_importing_the_package_loads_nothing_else() -> None:
    code = "import sys, elelem_daemon; print(*sorted(m for m in sys.modules if 'elelem_' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = [m for m in out.stdout.split() if m.split(".")[0] == "elelem_daemon"]
    assert loaded == ["elelem_daemon"]
