"""Logging: one stderr handler; level from ELELEM_LOG_LEVEL (default warning)."""

from __future__ import annotations

import logging
import os
import sys


def setup(level: str | None = None) -> None:
    name = (level or os.environ.get("ELELEM_LOG_LEVEL") or "warning").upper()
    name = {"WARN": "WARNING"}.get(name, name)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("elelem %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("elelem_daemon")
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, name, logging.WARNING))
    root.propagate = False
    logging.getLogger("pygls").setLevel(logging.WARNING)
