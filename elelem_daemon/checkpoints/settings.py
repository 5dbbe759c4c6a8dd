"""Settings: the checkpoint settings, read from the environment (docs/checkpoints.md).

    ELELEM_CHECKPOINTS           1    0 (or off, false, no) turns checkpoints off
    ELELEM_CHECKPOINTS_KEEP      100  turns kept per session; older ones are pruned
    ELELEM_CHECKPOINTS_DAYS      30   checkpoints older than this are pruned, and so are
                                      the shadows of folders not used for as long
    ELELEM_CHECKPOINTS_MAX_FILE  5M   larger files are left out (bytes, or K, M, G)
    ELELEM_CHECKPOINTS_TIMEOUT   30   seconds one checkpoint or restore may take

A value that does not parse keeps the default and is named in `problems` (the face
shows it once); it never stops a turn.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..base.config import state_dir

OFF = {"0", "off", "false", "no"}
SIZE = re.compile(r"\s*(\d+)\s*([kmg]?)i?b?\s*", re.I)
UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True)
class Settings:
    enabled: bool = True
    keep: int = 100
    days: float = 30.0
    max_file: int = 5 << 20
    timeout: float = 30.0
    root: Path = field(default_factory=lambda: state_dir() / "checkpoints")
    problems: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        problems: list[str] = []

        def number(name: str, default: float, low: float, high: float) -> float:
            raw = env.get(name, "").strip()
            if not raw:
                return default
            try:
                value = float(raw)
                if not low <= value <= high:
                    raise ValueError
            except ValueError:
                problems.append(f"{name}={raw!r} is not a number from {low:g} to {high:g}")
                return default
            return value

        size = cls.max_file
        if raw := env.get("ELELEM_CHECKPOINTS_MAX_FILE", "").strip():
            match = SIZE.fullmatch(raw)
            if match:
                size = int(match[1]) * UNITS[match[2].lower()]
            else:
                problems.append(f"ELELEM_CHECKPOINTS_MAX_FILE={raw!r} is not a size like 5M")
        return cls(
            enabled=env.get("ELELEM_CHECKPOINTS", "1").strip().lower() not in OFF,
            keep=int(number("ELELEM_CHECKPOINTS_KEEP", cls.keep, 1, 100_000)),
            days=number("ELELEM_CHECKPOINTS_DAYS", cls.days, 0.001, 36_500),
            max_file=size,
            timeout=number("ELELEM_CHECKPOINTS_TIMEOUT", cls.timeout, 0.1, 3600),
            root=state_dir(env) / "checkpoints",
            problems=tuple(problems),
        )
