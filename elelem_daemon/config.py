"""Settings shared by every face: which provider to use when none is named."""

from __future__ import annotations

import os


def default_provider() -> str:
    """The provider for a session that names none: ELELEM_PROVIDER, else the stub."""
    return os.environ.get("ELELEM_PROVIDER") or "stub"
