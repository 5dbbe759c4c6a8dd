"""The Language Server Protocol face: `elelem lsp`.

A language server on stdio, so the editors that speak only LSP (Helix, Kakoune,
Sublime Text, Emacs with Eglot or lsp-mode, vim-lsp, Neovim's own client) run the
agent: code actions start turns, edits come back as `workspace/applyEdit`, progress
as `$/progress`, questions as `window/showMessageRequest`. See docs/lsp.md.

server.py holds pygls's LanguageServer and its handlers; face.py the session and its
turns; actions.py what is offered; documents.py the editor's documents as the
session's files; window.py the Output and Input (messages, questions, trust);
progress.py a turn's progress and the transcript shown; answers.py the transcript file;
review.py a review's findings as diagnostics.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...store.store import Store


def serve(
    store: Store,
    provider: str | None = None,
    model: str | None = None,
    rules: Sequence[tuple[str, str]] = (),
) -> int:
    """Serve LSP on stdin/stdout until the client says `exit` or stdin ends."""
    from .face import LspFace
    from .server import build

    # fd 1 is the protocol's alone: anything else printing to stdout goes to stderr
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    server = build(lambda ls: LspFace(ls, store, provider, model, list(rules)))
    try:
        server.start_io(sys.stdin.buffer, out)
    except KeyboardInterrupt:
        return 130
    return 0
