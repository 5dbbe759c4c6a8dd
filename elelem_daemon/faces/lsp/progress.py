"""How a turn shows in the editor: a `$/progress` of its own where the client declares
`window.workDoneProgress` (created with `window/workDoneProgress/create`, cancellable:
its cancel stops the turn, face.py), and the transcript opened at its end with
`window/showDocument` where the client declares that. Each request is bounded by
WAIT seconds: a client that does not answer gets the messages instead.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.uris import from_fs_path

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)
WAIT = 10.0  # seconds the client gets to accept a progress token or open a document


async def begin(server: LanguageServer, title: str) -> str | None:
    """A progress begun for a turn: its token, or None where the client has none."""
    window = server.client_capabilities.window
    if window is None or not window.work_done_progress:
        return None
    token = f"elelem-{secrets.token_hex(6)}"
    try:
        async with asyncio.timeout(WAIT):
            await server.work_done_progress.create_async(token)
    except Exception as exc:  # refused, or no answer: the messages say it instead
        log.info("lsp: no progress token: %s", exc)
        return None
    start = lsp.WorkDoneProgressBegin(title="elelem", message=title, cancellable=True)
    server.work_done_progress.begin(token, start)
    return token


def end(server: LanguageServer, token: str, message: str) -> None:
    server.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=message))


async def show(server: LanguageServer, path: Path, edited: bool) -> bool:
    """`window/showDocument` where the client declares it; the focus stays in the code
    when the turn edited it. Whether the client showed it."""
    window = server.client_capabilities.window
    if window is None or window.show_document is None:
        return False
    shown = lsp.ShowDocumentParams(uri=from_fs_path(str(path)), take_focus=not edited)
    try:
        async with asyncio.timeout(WAIT):
            answer = await server.window_show_document_async(shown)
    except Exception as exc:
        log.info("lsp: showDocument failed: %s", exc)
        return False
    return bool(getattr(answer, "success", False))
