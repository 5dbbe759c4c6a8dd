"""Stored sessions in the terminal: `elelem sessions` and `elelem chat --resume [ID]`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ...base.errors import ElelemError, UnknownSession
from ...conversation import text_of
from ...session import Session
from ...store.records import Stored
from ...store.store import Store
from .visible import visible

SHORT = 8


def pick(store: Store, ref: str, cwd: Path) -> Stored:
    """The session `--resume` names: an id (or unique prefix), else the latest in cwd."""
    if ref:
        return store.load(store.find(ref))
    latest = store.latest(cwd)
    if latest is None:
        raise UnknownSession(f"no stored session in {cwd}; see `elelem sessions`")
    return store.load(latest.id)


def choose(store: Store, read: Callable[[str], str] = input) -> Stored:
    """The picker of `elelem chat --pick`: a numbered list, then a number or an id."""
    stored = store.list()
    if not stored:
        raise UnknownSession("no stored sessions")
    rows = visible(table(stored)).splitlines()  # titles are shown, not obeyed
    width = len(str(len(rows)))
    print("\n".join(f"{n:>{width}}  {row}" for n, row in enumerate(rows, 1)), flush=True)
    try:
        answer = (read(f"resume which? [1-{len(rows)} or an id] ") or "").strip()
    except EOFError:
        answer = ""
    if not sys.stdin.isatty():
        print(answer, flush=True)  # piped: show what was read, as the REPL does
    if not answer:
        raise UnknownSession("no session picked")
    if answer.isdigit() and len(answer) <= 3:  # a number from the list; ids are longer
        if not 1 <= int(answer) <= len(stored):
            raise UnknownSession(f"no session number {answer}: pick 1-{len(stored)} or an id")
        return store.load(stored[int(answer) - 1].id)
    return store.load(store.find(answer))


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


COMPACTED = "── context compacted here: the model reads a summary of what came before ──"


async def show_history(session: Session, title: str) -> None:
    """Redraw a resumed conversation: prompts as typed, tool calls as they ran (their
    line, and a failure's error), replies as the agent gave them, and a line where a
    compaction was (the whole transcript: store/history.py), as the live chat showed
    them: the summary the model reads from there (`/context` shows it) is not drawn as a
    prompt the user typed. A page at a time (store/pages.py's bound), letting the loop
    run between pages (Ctrl-C, signals)."""
    from ...result import Result
    from ...store import pages
    from ...store.recorder import entries

    output = session.output
    output.say(f"resumed session {session.id[:SHORT]}: {title}", "info")
    weight = 0
    for entry in list(entries(session)[0]):
        weight += pages.weight(entry)
        if weight > pages.PAGE_WEIGHT:
            weight = 0
            await asyncio.sleep(0)
        if entry["type"] == "compacted":
            output.say(COMPACTED, "info")
        elif entry["type"] == "tool":
            call = {"id": entry["id"], "name": entry["name"], "arguments": entry["arguments"]}
            output.doing(call)
            output.result(call, Result(entry["result"], entry["ok"]))
        elif entry["role"] == "user" and entry.get("prompt") is False:
            continue  # a compaction's summary: the model's to read (/context), not typed
        elif entry["role"] == "user":
            output.say(f"> {text_of(entry['content'])}")
        elif entry["role"] == "assistant":
            output.reply(entry["content"])
    from .plan import redraw

    redraw(session)  # its last plan, and its mode


def stored_sessions(options: argparse.Namespace, store: Store) -> int:
    """`elelem sessions`; a problem is one line on stderr."""
    try:
        return sessions(options, store)
    except ElelemError as exc:
        print(f"elelem: {exc}", file=sys.stderr)
        return 1


def sessions(options: argparse.Namespace, store: Store) -> int:
    """`elelem sessions [--here] [--json] [--delete ID]`."""
    if options.delete:
        from ...plugins import core_registry
        from ...session import delete

        session_id = store.find(options.delete)
        asyncio.run(delete(core_registry(), store, session_id))  # its checkpoints go too
        print(f"deleted {session_id}")
        return 0
    stored = store.list(Path.cwd() if options.here else None)
    if options.json:
        for entry in stored:
            print(json.dumps(entry.summary(), ensure_ascii=False))
    else:
        print(visible(table(stored)))
    return 0
