"""Checkpoint fixtures: a state folder and a project folder per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elelem_daemon.checkpoints import Settings, close_all


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("ELELEM_STATE_DIR", str(folder))
    for name in list(os.environ):
        if name.startswith("ELELEM_CHECKPOINTS"):
            monkeypatch.delenv(name)
    return folder


@pytest.fixture
def project(tmp_path: Path, state: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def settings(state: Path) -> Settings:
    return Settings.from_env()


@pytest.fixture(autouse=True)
async def closed():
    yield
    await close_all()
