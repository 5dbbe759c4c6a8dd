"""Review as diagnostics: a turn in `review` mode reports its findings as
`path:line: finding` lines (the prompt asks for that form), and each becomes a
diagnostic with source `elelem` on that line of that file, published with
`textDocument/publishDiagnostics`. The editor hands a diagnostic back in a code action
request's context, where `elelem: fix this diagnostic` is offered for it (actions.py).

The reply is the model's and hostile: only files inside the folder count, at most
FINDINGS findings, each message cut to MESSAGE_CAP characters; a later review replaces
the earlier one's diagnostics (files without findings now are published empty).
"""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as lsp

FINDING = re.compile(
    r"^[\s>*\-\d.)]*`?(?P<path>[^\s:`]+\.[^\s:`]+):(?P<line>\d{1,7})(?::\d{1,7})?`?\**\s*[:\-–—]?\s*"
    r"(?P<message>\S.*)$"
)
FINDINGS = 200
MESSAGE_CAP = 1000
ASK = (
    "\n\nReport each finding on a line of its own, as `path:line: finding` (the path "
    "relative to the folder): the editor shows each one on its line."
)


def findings(text: str, root: Path) -> dict[Path, list[tuple[int, str]]]:
    """The findings of a review's reply, by file (inside root), as (0-based line, text)."""
    found: dict[Path, list[tuple[int, str]]] = {}
    count = 0
    for line in text.splitlines():
        match = FINDING.match(line)
        if match is None or count >= FINDINGS:
            continue
        try:
            path = (root / match["path"]).resolve()
            path.relative_to(root)
        except (ValueError, OSError, RuntimeError):
            continue
        if not path.is_file():
            continue
        message = match["message"].strip()[:MESSAGE_CAP]
        found.setdefault(path, []).append((max(int(match["line"]) - 1, 0), message))
        count += 1
    return found


def diagnostics(lines: list[tuple[int, str]]) -> list[lsp.Diagnostic]:
    return [
        lsp.Diagnostic(
            range=lsp.Range(
                start=lsp.Position(line=number, character=0),
                end=lsp.Position(line=number + 1, character=0),
            ),
            message=message,
            severity=lsp.DiagnosticSeverity.Warning,
            source="elelem",
        )
        for number, message in lines
    ]
