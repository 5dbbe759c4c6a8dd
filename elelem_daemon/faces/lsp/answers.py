"""The transcript: a session's replies in a Markdown file the editor can open.

LSP has no chat pane, so each turn's reply (and what it did) is appended to
`<state dir>/lsp/<session id>.md`, a file of elelem's own. The face opens it with
`window/showDocument` where the client declares it (Helix, Neovim), else says its path
in one `window/showMessage` line (Emacs 28's Eglot). The file holds at most
TRANSCRIPT_CAP bytes: past that it starts again with the latest turn.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ...base.config import state_dir

TRANSCRIPT_CAP = 4 << 20


def transcript_path(session_id: str) -> Path:
    safe = "".join(c for c in session_id if c.isalnum() or c in "-_")[:80] or "session"
    return state_dir() / "lsp" / f"{safe}.md"


def section(title: str, calls: list[str], reply: str) -> str:
    did = "".join(f"- {call}\n" for call in calls)
    body = reply.strip() or "(no reply)"
    return f"## {title}\n\n{did}{chr(10) if did else ''}{body}\n\n"


async def append(path: Path, text: str) -> Path:
    """Add a turn's section (in a thread: the disk is slow); the file is the user's
    alone (0600), and a file past TRANSCRIPT_CAP starts again."""

    def work() -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = 0
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        flags |= os.O_TRUNC if size + len(text) > TRANSCRIPT_CAP else os.O_APPEND
        fd = os.open(path, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)

    await asyncio.to_thread(work)
    return path
