"""How a tool call reads in the terminal: a compact header, then its output folded.

- `header`: `execute(bin/test)`. One argument shows only its value; several show
  `name=value` pairs; strings past CUT characters are cut with `…` (only here: the
  permission question shows them whole). Everything is made visible (visible.py).
- `folded`: the first FOLD lines of what the call gave back (its `content`, a diff,
  an answer, else the payload as JSON), then `… N more lines`; and the mark: `✓`, or
  `✗` with the error or the exit status.
"""

from __future__ import annotations

import json
from typing import Any

from ...result import Result
from .visible import visible, visible_line

CUT = 50
FOLD = 4
WIDE = 200  # a shown output line is cut here (a minified file is one line)


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


def folded(result: Result, lines: int = FOLD) -> tuple[list[str], bool, str]:
    """(the first lines of the output, visible; whether the call succeeded; the mark's
    text after ✓/✗, e.g. an error or `exit 2`)."""
    text = output_of(result).rstrip("\n")
    shown = [cut(visible(line).expandtabs(4), WIDE) for line in text.split("\n")] if text else []
    if len(shown) > lines:
        more = len(shown) - lines
        shown = shown[:lines] + [f"… {more} more line{'s' if more > 1 else ''}"]
    status = result.payload.get("exit_status")
    if not result.ok:
        return shown, False, visible_line(str(result.error))
    if isinstance(status, int) and status != 0:
        return shown, False, f"exit {status}"
    return shown, True, ""
