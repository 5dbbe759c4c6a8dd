"""Set-up shared by the tests that take real checkpoints: no checkpoint setting comes
from the environment, and the user allows what the test's tools do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def allow(home: Path, monkeypatch: pytest.MonkeyPatch, rules: str) -> None:
    """Checkpoints at their defaults under `home`, and `rules` as the user's permissions."""
    for name in list(os.environ):
        if name.startswith("ELELEM_CHECKPOINTS") or name == "ELELEM_STATE_DIR":
            monkeypatch.delenv(name)
    config = home / ".config" / "elelem"
    config.mkdir(parents=True, exist_ok=True)
    (config / "permissions").write_text(rules)
