"""Plans: the task list the model keeps with the `todo` tool, and who shows it.

A plan is a list of entries `{"content": str, "status": "pending"|"in_progress"|
"completed"}`, the whole list each time (builtins/todo.py validates and bounds it). A
session's `Plan` holds the last one and tells its `listeners` (the faces: `event/plan`,
ACP's `plan` update, the terminal's list). The plan is ordinary tool traffic: what the
model reads of it lives for the turn, and the store keeps it as the `todo` call's
tool record, so `last_plan(history)` finds it again for a redraw.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)
STATUSES = ("pending", "in_progress", "completed")
TOOL = "todo"
Entry = dict[str, str]
Listener = Callable[[list[Entry]], None]


class Plan:
    """A session's plan: the last entries, and who hears a new list."""

    def __init__(self) -> None:
        self.entries: list[Entry] | None = None
        self.listeners: list[Listener] = []

    def update(self, entries: list[Entry]) -> None:
        self.entries = [dict(e) for e in entries]
        for listener in list(self.listeners):
            try:
                listener(list(self.entries))
            except Exception as exc:  # a face that fails to show it costs a log line
                log.warning("plan: a listener failed: %s", exc, exc_info=True)


def entries_of(todos: Any) -> list[Entry] | None:
    """The entries of a `todo` call's `todos`, or None if they are not a plan (a
    stored record is read as hostile: only strings and known statuses)."""
    if not isinstance(todos, list):
        return None
    entries = []
    for item in todos:
        if not isinstance(item, dict):
            return None
        content, status = item.get("content"), item.get("status")
        if not isinstance(content, str) or status not in STATUSES:
            return None
        entries.append({"content": content, "status": status})
    return entries


def last_plan(history: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """`{"entries": [...]}` of the last `todo` call that succeeded, or None."""
    found = None
    for entry in history:
        if entry.get("type") == "tool" and entry.get("name") == TOOL and entry.get("ok"):
            arguments = entry.get("arguments")
            todos = arguments.get("todos") if isinstance(arguments, dict) else None
            entries = entries_of(todos)
            if entries is not None:
                found = entries
    return None if found is None else {"entries": found}


def compact(entries: list[Entry]) -> str:
    """The plan as the terminal prints it: `[x] done`, `[~] doing`, `[ ] to do`."""
    marks = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
    return "\n".join(f"  {marks.get(e['status'], '[ ]')} {e['content']}" for e in entries)
