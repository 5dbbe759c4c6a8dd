"""Figures from outside: every number a provider or a server hands us (token counts,
context windows) is bounded here before any arithmetic uses it (issue 36).

- A token count (`count`) is a whole number from 0 to MAX_TOKENS. No model reads or
  writes a hundred million tokens in one request, so a larger figure is a broken or
  hostile server: it is logged once (per name, per process) and treated as unknown,
  so a 400-digit count can never reach a float (a price) and overflow it.
- A context window (`window`) is a count from MIN_WINDOW up. Below the floor no model
  works, and every compaction would split the history into the most pieces it allows
  (a request each): the figure is ignored, and `window_note` says so, in one line.

Prices are bounded where they are read (turns/usage.py: from 0 to a million dollars
per million tokens).
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

MAX_TOKENS = 100_000_000
MIN_WINDOW = 1024
_logged: set[str] = set()


def count(name: str, value: Any) -> int | None:
    """A token count, or None when it is not a whole number in 0..MAX_TOKENS."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    if 0 <= value <= MAX_TOKENS:
        return value
    if name not in _logged:
        _logged.add(name)
        log.warning("%s: %s is outside 0..%d: treated as unknown", name, shown(value), MAX_TOKENS)
    return None


def window(value: Any) -> int | None:
    """A context window in tokens, or None when `window_note` has something to say."""
    tokens = count("context window", value)
    return tokens if tokens is not None and tokens >= MIN_WINDOW else None


def window_note(source: str, value: Any) -> str | None:
    """The line that says why a provider's window figure is ignored; None when it is not."""
    if window(value) is not None or value is None:
        return None
    return (
        f"context window: {source} says {shown(value)} tokens, outside "
        f"{MIN_WINDOW}..{MAX_TOKENS}: ignored (set ELELEM_CONTEXT_WINDOW to give one)"
    )


def shown(value: Any) -> str:
    """A figure as a short text: a 400-digit number is not written whole."""
    try:
        text = str(value) if isinstance(value, int) else repr(value)
    except ValueError:  # past Python's digit limit for str()
        return f"a number of {value.bit_length()} bits"
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} characters)"
