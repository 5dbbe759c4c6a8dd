"""How a tool call reads in the terminal: a compact header, then its output folded.

- `header`: `execute(bin/test)`. One argument shows only its value; several show
  `name=value` pairs; strings past CUT characters are cut with `…` (only here: the
  permission question shows them whole). Everything is made visible (visible.py).
- `folded`: the first FOLD lines of what the call gave back (its `content`, a diff,
  an answer, else the payload as JSON), then `… N more lines`; and the mark: `✓`, or
  `✗` with the error or the exit status. A diff (an `edit`'s, a `write`'s) shows its
  changed lines (`-`, `+`) first, not its headers and context.
- `Whole`: the whole of the last folded results; Ctrl-O at the prompt prints the latest,
  pressed again the one before (the fold's last line says so, on a terminal).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from ...result import Result
from .visible import visible, visible_line

CUT = 50
FOLD = 4
WIDE = 200  # a shown output line is cut here (a minified file is one line)
KEY = "ctrl+o"  # opens the whole of a folded result (editor.py)
KEPT = 20  # folded results Ctrl-O can open, newest first
WHOLE_LINES = 5000  # lines of one whole result printed


def cut(text: str, limit: int = CUT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def value_text(value: Any) -> str:
    if isinstance(value, str):
        return cut(visible_line(value))
    return cut(visible_line(json.dumps(value, ensure_ascii=False, default=str)))


def header(call: dict[str, Any]) -> str:
    """`name(value)` or `name(a=1, b=x)`; `name()` without arguments."""
    arguments = call.get("arguments")
    name = visible_line(str(call.get("name", "")))
    if not isinstance(arguments, dict) or not arguments:
        return f"{name}()"
    if len(arguments) == 1:
        return f"{name}({value_text(next(iter(arguments.values())))})"
    pairs = ", ".join(f"{visible_line(str(k))}={value_text(v)}" for k, v in arguments.items())
    return f"{name}({pairs})"


def output_of(result: Result) -> str:
    """The part of a result a person wants to see first."""
    payload = result.payload
    for key in ("diff", "content", "answer"):
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value
    if not result.ok:
        return ""  # the error says it
    rest = {k: v for k, v in payload.items() if k not in ("error", "path", "exit_status")}
    return json.dumps(rest, ensure_ascii=False, default=str) if rest else ""


def whole(result: Result) -> list[str]:
    """Every line of what the call gave back, visible."""
    text = output_of(result).rstrip("\n")
    return [cut(visible(line).expandtabs(4), WIDE) for line in text.split("\n")] if text else []


def changed(lines: list[str]) -> list[str]:
    """A unified diff's changed lines: its `---` / `+++` file headers (a `---` line then
    a `+++` line) aside, a removed `--` line kept."""
    found = []
    for i, line in enumerate(lines):
        after = lines[i + 1] if i + 1 < len(lines) else ""
        header = line.startswith("--- ") and after.startswith("+++ ")
        if header or (line.startswith("+++ ") and i and lines[i - 1].startswith("--- ")):
            continue
        if line[:1] in ("+", "-"):
            found.append(line)
    return found


def folded(
    result: Result, lines: int = FOLD, key: str | None = None
) -> tuple[list[str], bool, str]:
    """(the first lines of the output, visible, a diff's changed lines first; whether
    the call succeeded; the mark's text after ✓/✗, e.g. an error or `exit 2`). `key`
    names the key that opens the whole result, said on the fold's last line."""
    shown = whole(result)
    if len(shown) > lines:
        diff = (
            isinstance(result.payload.get("diff"), str)
            and output_of(result) == result.payload["diff"]
        )
        first = (changed(shown) if diff else []) or shown
        more = len(shown) - min(lines, len(first))
        hint = f" ({key} shows it whole)" if key else ""
        shown = first[:lines] + [f"… {more} more line{'s' if more > 1 else ''}{hint}"]
    if result.failed:
        return shown, False, visible_line(result.why_failed)
    return shown, True, ""


class Whole:
    """The whole of the last KEPT folded results, for Ctrl-O: `keep` one as it is
    folded; `next` gives the newest not yet opened since the last `keep`, then the one
    before it, and so on (None when none is left)."""

    def __init__(self) -> None:
        self.kept: deque[tuple[str, list[str]]] = deque(maxlen=KEPT)
        self.at = 0

    def keep(self, title: str, lines: list[str]) -> None:
        self.kept.append((title, lines))
        self.at = 0

    def next(self) -> tuple[str, list[str]] | None:
        if self.at >= len(self.kept):
            return None
        self.at += 1
        title, lines = self.kept[-self.at]
        if len(lines) > WHOLE_LINES:
            cut_off = len(lines) - WHOLE_LINES
            lines = lines[:WHOLE_LINES] + [f"… {cut_off} more lines not shown"]
        return title, lines
