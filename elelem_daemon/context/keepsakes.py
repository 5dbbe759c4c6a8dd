"""Keepsakes: what a compaction carries word for word, after the summary.

A summary keeps the gist and loses the rest; what users most complain about losing
(their own instructions, the plan, recent work) is not left to it. `Keepsakes` hears
every tool call a session keeps (`Agent.call_listeners`) and, at a compaction, renders
after the summary (`carry`):

- **the user's own words**: the text of every user message compacted (prompts, steers),
  an attachment's block named, not repeated (`[attached: file src/a.py]`), each cut at
  ONE_CHARS; with those an earlier compaction carried first, oldest first. Over the
  budget, the newest are kept and the count left out is said;
- **the plan**: the last `todo` list that succeeded (turns/plans.py);
- **the files changed**: each path an `edit`-kind tool touched with success, the tools
  that did, and its state now (its size, or that it is gone);
- **the last error being worked on**: the last failed tool call and its error, until a
  later call of the same tool succeeds.

All of it takes at most KEEP_SHARE of the window (KEEP_CHARS with no window known), so
the compacted context stays well below the compaction threshold: compaction never
repeats turn after turn for the same content. The user's words are read back from an
earlier compaction's message (`USER_OPEN` ... `USER_CLOSE`), so a resumed session
carries them too, and the plan as it was kept when this process has heard none since;
the files and the error are this process's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..conversation import Message, text_of
from ..turns.plans import TOOL, compact, entries_of
from . import blocks
from .compaction import SUMMARY_PREFIX as CONTEXT  # a compaction's message starts so

KEEP_SHARE = 0.1  # of the window, in characters at 4 a token: all that is carried
KEEP_CHARS = 16_000  # the same with no window known
ONE_CHARS = 2_000  # one user message, at most
MAX_WORDS = 200  # user messages remembered at most
MAX_FILES = 50
ERROR_CHARS = 600
HEADER = "Kept word for word from before the summary:"
PLAN = "The plan (todo):"
USER_OPEN = "<user-words>"
USER_CLOSE = "</user-words>"
SEPARATOR = "\n-----\n"


class Keepsakes:
    """One session's keepsakes. `kind_of(name)` is a tool's kind (tool.py)."""

    def __init__(self, kind_of: Callable[[str], str] | None = None) -> None:
        self.kind_of = kind_of or (lambda name: "other")
        self.plan: list[dict[str, str]] | None = None
        self.files: dict[str, list[str]] = {}  # path -> the tools that changed it
        self.error: tuple[str, str] | None = None  # (the call, its error)

    def heard(self, call: dict[str, Any], result: Any) -> None:
        """A call kept by the session, once it ran (Agent.call_listeners)."""
        name = str(call.get("name", ""))
        found = call.get("arguments")
        arguments: dict[str, Any] = found if isinstance(found, dict) else {}
        ok = bool(getattr(result, "ok", False))
        if not ok:
            error = str(getattr(result, "error", None) or "failed")[:ERROR_CHARS]
            self.error = (subject(name, arguments), error)
            return
        if self.error is not None and self.error[0].split(" ", 1)[0] == name:
            self.error = None  # the same tool worked since: that error is behind
        if name == TOOL:
            entries = entries_of(arguments.get("todos"))
            if entries is not None:
                self.plan = entries
        path = arguments.get("path")
        if isinstance(path, str) and path and self.kind_of(name) in ("edit", "delete", "move"):
            tools = self.files.pop(path, [])  # the newest change last
            if name not in tools:
                tools.append(name)
            self.files[path] = tools
            while len(self.files) > MAX_FILES:
                self.files.pop(next(iter(self.files)))

    def carry(self, compacted: Iterable[Message], window: int | None, cwd: Path) -> str:
        """The text to put after the summary: the module's four parts, bounded."""
        budget = int(window * KEEP_SHARE * 4) if window else KEEP_CHARS
        parts: list[str] = []
        compacted = list(compacted)
        if self.plan:
            parts.append(PLAN + "\n" + compact(self.plan)[: budget // 4])
        elif earlier := section(compacted, PLAN):  # a resumed session's: as it was kept
            parts.append(earlier[: budget // 4])
        if self.files:
            lines = [f"- {p}: {', '.join(t)}; {state(p, cwd)}" for p, t in self.files.items()]
            parts.append("Files changed (their state now):\n" + "\n".join(lines)[: budget // 4])
        if self.error is not None:
            parts.append(f"The last error being worked on ({self.error[0]}):\n{self.error[1]}")
        left = budget - sum(len(p) for p in parts)
        words = user_words(compacted)
        if words:
            parts.insert(0, rendered(words, max(left, 0)))
        if not parts:
            return ""
        return "\n\n".join([HEADER, *parts])


def user_words(messages: list[Message]) -> list[str]:
    """The user's words in `messages`, oldest first: those an earlier compaction's
    message carried, then each user message's own text."""
    words: list[str] = []
    for message in messages:
        if message.get("role") != "user":
            continue
        text = text_of(message.get("content"))
        if text.startswith(CONTEXT):
            words += carried(text)
            continue
        own, attached = blocks.parse(text)
        named = [f"[attached: {label(a)}]" for a, _ in attached]
        one = "\n".join([own.strip(), *named]).strip()
        if one:
            words.append(one if len(one) <= ONE_CHARS else one[:ONE_CHARS] + " [cut]")
    return words[-MAX_WORDS:]


def section(messages: list[Message], title: str) -> str:
    """The section `title` of an earlier compaction's message (to its blank line), or ""."""
    for message in messages:
        text = text_of(message.get("content")) if message.get("role") == "user" else ""
        end = text.find(USER_CLOSE)
        at = text.find(f"\n\n{title}\n", max(end, 0))
        if text.startswith(CONTEXT) and at >= 0:
            return text[at + 2 :].split("\n\n", 1)[0]
    return ""


def label(attributes: dict[str, str]) -> str:
    """An attachment as the user's words name it: `file src/a.py`."""
    name = attributes.get("path") or attributes.get("name") or ""
    return f"{attributes.get('type', '')} {name}".strip()


def carried(text: str) -> list[str]:
    """The user's words an earlier compaction's message carried."""
    start = text.find(USER_OPEN)
    end = text.find(USER_CLOSE, start)
    if start < 0 or end < 0:
        return []
    inner = text[start + len(USER_OPEN) : end].strip("\n")
    if inner.startswith("("):  # the count of those left out
        inner = inner.partition("\n")[2]
    return [w for w in inner.split(SEPARATOR) if w.strip()]


def rendered(words: list[str], budget: int) -> str:
    """The user's words, oldest first, the newest kept when they pass `budget`."""
    kept: list[str] = []
    used = 0
    for word in reversed(words):
        if kept and used + len(word) + len(SEPARATOR) > budget:
            break
        kept.append(word if len(word) <= budget else word[: max(budget, 80)] + " [cut]")
        used += len(word) + len(SEPARATOR)
    kept.reverse()
    dropped = len(words) - len(kept)
    head = f"({dropped} older message(s) left out)\n" if dropped else ""
    body = SEPARATOR.join(w.replace(USER_CLOSE, "<\\/user-words>") for w in kept)
    return f"The user's own words, oldest first:\n{USER_OPEN}\n{head}{body}\n{USER_CLOSE}"


def subject(name: str, arguments: dict[str, Any]) -> str:
    """`read src/a.py`: a call's tool and the first of its arguments that names something."""
    for key in ("path", "command", "pattern", "query", "url", "name"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            one = value.splitlines()[0] if value.strip() else value
            return f"{name} {one[:80]}"
    return name


def state(path: str, cwd: Path) -> str:
    """A changed file's state now: its size, or that it is gone."""
    try:
        found = os.stat(cwd / path)
    except (OSError, ValueError):
        return "now missing"
    return f"now {found.st_size:,} bytes"
