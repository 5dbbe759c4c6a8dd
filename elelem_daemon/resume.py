"""Stored sessions in the terminal: `elelem sessions` and `elelem chat --resume [ID]`."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from .errors import UnknownSession
from .store import Store, Stored

SHORT = 8


def pick(store: Store, ref: str, cwd: Path) -> Stored:
    """The session `--resume` names: an id (or unique prefix), else the latest in cwd."""
    if ref:
        return store.load(store.find(ref))
    latest = store.latest(cwd)
    if latest is None:
        raise UnknownSession(f"no stored session in {cwd}; see `elelem sessions`")
    return store.load(latest.id)


def local_time(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def home_short(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if path == home or path.startswith(home + "/") else path


def table(stored: list[Stored]) -> str:
    """One line per session: short id, last update (local time), folder, title."""
    if not stored:
        return "no stored sessions"
    rows = [(s.id[:SHORT], local_time(s.updated), home_short(s.cwd), s.title) for s in stored]
    width = max(len(row[2]) for row in rows)
    return "\n".join(f"{i}  {when}  {cwd.ljust(width)}  {title}" for i, when, cwd, title in rows)


def show_history(session: Any, title: str) -> None:
    """Redraw a resumed conversation: prompts as typed, replies as the agent gave them."""
    output = session.output
    output.say(f"resumed session {session.id[:SHORT]}: {title}", "info")
    for message in session.conversation:
        if message["role"] == "user":
            output.say(f"> {message['content']}")
        elif message["role"] == "assistant":
            output.reply(message["content"])


def sessions(options: argparse.Namespace) -> int:
    """`elelem sessions [--here] [--json] [--delete ID]`."""
    store = Store()
    if options.delete:
        session_id = store.find(options.delete)
        store.delete(session_id)
        print(f"deleted {session_id}")
        return 0
    stored = store.list(Path.cwd() if options.here else None)
    if options.json:
        for entry in stored:
            print(json.dumps(entry.summary(), ensure_ascii=False))
    else:
        print(table(stored))
    return 0
