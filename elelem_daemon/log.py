"""Logging: one handler; level from ELELEM_LOG_LEVEL (default warning).

The editor faces log to stderr (stdout is the protocol). The terminal face logs to a
file under the state folder instead (`to_file`, rotated at MAX_BYTES), so no log line
lands in the middle of a rendered reply; `--log-level` or ELELEM_LOG_LEVEL brings the
log back to stderr. A file that cannot be opened falls back to stderr.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from pathlib import Path

MAX_BYTES = 1 << 20


def setup(level: str | None = None, to_file: Path | None = None) -> None:
    name = (level or os.environ.get("ELELEM_LOG_LEVEL") or "warning").upper()
    name = {"WARN": "WARNING"}.get(name, name)
    handler: logging.Handler = logging.StreamHandler(sys.stderr)
    shape = "elelem %(levelname)s %(name)s: %(message)s"
    if to_file is not None:
        try:
            to_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            handler = logging.handlers.RotatingFileHandler(
                to_file, maxBytes=MAX_BYTES, backupCount=1, encoding="utf-8", delay=True
            )
            shape = "%(asctime)s " + shape
        except OSError:
            pass
    handler.setFormatter(logging.Formatter(shape))
    root = logging.getLogger("elelem_daemon")
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, name, logging.WARNING))
    root.propagate = False
    logging.getLogger("pygls").setLevel(logging.WARNING)
