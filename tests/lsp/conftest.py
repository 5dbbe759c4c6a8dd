"""Fixtures for `elelem lsp`: a folder, an isolated HOME, a scripted model, an editor."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from support.lsp import Editor
from support.model import Model, env


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "a.py").write_text("# elelem: add a docstring\ndef f():\n    return 1\n")
    return path


@pytest.fixture
def model() -> Iterator[Model]:
    server = Model()
    yield server
    server.stop()


@pytest.fixture
def environ(tmp_path: Path, model: Model) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".config" / "elelem").mkdir(parents=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    return env(
        model,
        base,
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        ELELEM_LOG_LEVEL="info",
    )


@pytest.fixture
async def editor(folder: Path) -> AsyncIterator[Editor]:
    made = Editor(folder)
    yield made
    await made.stop()
