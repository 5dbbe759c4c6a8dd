"""The user's confirmation of their own files (safety/vetted.py), for tests that write
them by hand between two loads in one process, as the user would confirm an edit."""

from __future__ import annotations

from elelem_daemon.safety import vetted


def confirm() -> list[vetted.HeldFile]:
    """Approve every user file held now (what `elelem trust --user-files` does)."""
    return vetted.approve(vetted.held())
