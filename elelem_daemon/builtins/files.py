"""Built-in tools `read`, `write` and `edit`. Paths are relative to the session's cwd.

`read` shows at most READ_LINES lines and READ_CAP bytes (ELELEM_READ_CAP), from line
`offset` on (`limit` lines), with a `note` saying what was left out and how to read on
(the caps and the cutting live in filesystem.py, which attachments share).

`write` and `edit` land through `changes.land`: refused as a conflict when the file
changed since the agent read it in this turn, reviewed when the permission policy says
`review`, and answered with what happened (the texts live there). Their results carry
`diff`: a unified diff of what changed (from `/dev/null` for a new file), capped at
DIFF_CAP characters, so clients can show it (hunks.py: the one home of diffs). `read`
tells the session what it saw (`session.seen`), which the conflict check compares.

No file tool (these, `glob`, `grep`, `list`) touches `/proc`, `/sys` or `/dev`, nor
anything that resolves into them (symlinks and `..` followed first): `target`
refuses them, saying why (the rule: `filesystem.refusal`). Process environments and
memory live there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..edits.changes import land, snapshot
from ..edits.filesystem import READ_CAP, READ_LINES, excerpt, refusal
from ..edits.hunks import DIFF_CAP, DIFF_INPUT_CAP, diff, unified
from ..ports import SessionView
from ..registry import Plugin

PATH = {"type": "string", "description": "File path, relative to the working directory"}
__all__ = ["DIFF_CAP", "DIFF_INPUT_CAP", "diff", "unified", "preview", "resolve", "target"]


class Refused(Exception):
    """A path the file tools never touch."""


def resolve(session: SessionView, path: str) -> Path:
    return (session.cwd / Path(path).expanduser()).resolve()


def target(session: SessionView, path: str) -> Path:
    """The resolved path a file tool may use; raises Refused for /proc, /sys, /dev."""
    resolved = resolve(session, path)
    reason = refusal(resolved)
    if reason is not None:
        shown = path if str(resolved) == path else f"{path} (resolved: {resolved})"
        raise Refused(
            f"refused: {shown}: {reason}; the file tools do not touch /proc, /sys or /dev "
            "(process environments and memory, devices)"
        )
    return resolved


async def current(session: SessionView, path: Path) -> str | None:
    """The file's text as the session sees it (see session.files); None when there is none."""
    try:
        return await session.files.read_text(path, errors="replace")
    except FileNotFoundError:
        return None


def replaced(text: str, old: str, new: str) -> str | dict[str, str]:
    """text with old replaced once, or the error when old does not occur exactly once."""
    count = text.count(old) if old else 0
    if count == 0:
        return {"error": "text not found"}
    if count > 1:
        return {"error": f"text occurs {count} times; include more context so it occurs once"}
    return text.replace(old, new, 1)


async def preview(session: SessionView, tool: str, args: dict[str, Any]) -> str | None:
    """The diff `write` or `edit` would make with args; None for other tools or a failing edit."""
    if tool not in ("write", "edit") or not isinstance(args.get("path"), str):
        return None
    try:
        path = target(session, args["path"])
        before = await current(session, path)
    except (Refused, OSError):
        return None  # the tool itself says why
    if tool == "write":
        return await diff(before, str(args.get("content", "")), args["path"])
    if before is None:
        return None
    after = replaced(before, str(args.get("old", "")), str(args.get("new", "")))
    return await diff(before, after, args["path"]) if isinstance(after, str) else None


def reviewed(session: SessionView, tool: str, args: dict[str, Any]) -> bool:
    """Whether the permission policy says `review` for this call (its hook let it run)."""
    verdict = getattr(getattr(session, "permissions", None), "verdict", None)
    return verdict is not None and verdict(session, tool, args) == "review"


def register(plugin: Plugin) -> None:
    @plugin.tool(
        "read",
        "Read file",
        {
            "path": PATH,
            "offset": {"type": "integer", "minimum": 1, "description": "First line (default 1)"},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Number of lines (default and most: {READ_LINES})",
            },
        },
        ["path"],
        ["open"],
        kind="read",
    )
    async def read(session: SessionView, args: dict[str, Any]) -> dict[str, Any]:
        path = target(session, args["path"])
        offset = int(args.get("offset") or 1)
        limit = min(int(args.get("limit") or READ_LINES), READ_LINES)
        try:
            shown = await excerpt(session.files, path, offset, limit, READ_CAP)
        except FileNotFoundError:
            session.seen.record(path, None)
            return {"error": "not found", "path": args["path"]}
        if shown.hashed:
            session.seen.record(path, shown.digest)
        result = {"content": shown.text, "path": args["path"]}
        if shown.note:
            result["note"] = shown.note
        return result

    @plugin.tool(
        "write",
        "Write file",
        {"path": PATH, "content": {"type": "string", "description": "The whole new content"}},
        ["path", "content"],
        ["write<|channel|>"],
        kind="edit",
    )
    async def write(session: SessionView, args: dict[str, Any]) -> dict[str, Any]:
        path = target(session, args["path"])
        base = await snapshot(session, path, errors="replace")
        review = reviewed(session, "write", args)
        return await land(session, path, args["path"], base, args["content"], review)

    @plugin.tool(
        "edit",
        "Replace exactly one occurrence of text in file",
        {
            "path": PATH,
            "old": {"type": "string", "description": "Text to replace; must occur exactly once"},
            "new": {"type": "string", "description": "Replacement text"},
        },
        ["path", "old", "new"],
        kind="edit",
    )
    async def edit(session: SessionView, args: dict[str, Any]) -> dict[str, Any]:
        path = target(session, args["path"])
        base = await snapshot(session, path)
        if base.text is None:
            return {"error": "not found", "path": args["path"]}
        after = replaced(base.text, args["old"], args["new"])
        if isinstance(after, dict):
            return {**after, "path": args["path"]}
        review = reviewed(session, "edit", args)
        result = await land(session, path, args["path"], base, after, review)
        if "error" in result:
            return result
        return {**result, "replaced": args["old"], "with": args["new"]}
