"""Built-in tools `read`, `write` and `edit`. Paths are relative to the session's cwd.

`write` and `edit` results carry `diff`: a unified diff of what changed (from
`/dev/null` for a new file), capped at DIFF_CAP characters, so clients can show it.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from ..registry import Plugin

PATH = {"type": "string", "description": "File path, relative to the working directory"}
DIFF_CAP = 50_000


def resolve(session: Any, path: str) -> Path:
    return (session.cwd / Path(path).expanduser()).resolve()


def unified(before: str | None, after: str, name: str) -> str:
    """A unified diff from before (None: no file) to after, as git shows a missing newline."""
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        after.splitlines(keepends=True),
        "/dev/null" if before is None else name,
        name,
    )
    text = "".join(
        line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in lines
    )
    if len(text) > DIFF_CAP:
        cut = text.rfind("\n", 0, DIFF_CAP) + 1 or DIFF_CAP  # whole lines only
        text = f"{text[:cut]}[... diff truncated: {len(text) - cut} more characters]\n"
    return text


async def current(session: Any, path: Path) -> str | None:
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


async def preview(session: Any, tool: str, args: dict[str, Any]) -> str | None:
    """The diff `write` or `edit` would make with args; None for other tools or a failing edit."""
    if tool not in ("write", "edit") or not isinstance(args.get("path"), str):
        return None
    path = resolve(session, args["path"])
    before = await current(session, path)
    if tool == "write":
        return unified(before, str(args.get("content", "")), args["path"])
    if before is None:
        return None
    after = replaced(before, str(args.get("old", "")), str(args.get("new", "")))
    return unified(before, after, args["path"]) if isinstance(after, str) else None


def register(plugin: Plugin) -> None:
    @plugin.tool("read", "Read file", {"path": PATH}, ["path"], ["open"], kind="read")
    async def read(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        path = resolve(session, args["path"])
        try:
            content = await session.files.read_text(path, errors="replace")
        except FileNotFoundError:
            return {"error": "not found", "path": args["path"]}
        return {"content": content, "path": args["path"]}

    @plugin.tool(
        "write",
        "Write file",
        {"path": PATH, "content": {"type": "string", "description": "The whole new content"}},
        ["path", "content"],
        ["write<|channel|>"],
        kind="edit",
    )
    async def write(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        path = resolve(session, args["path"])
        before = await current(session, path)
        written = await session.files.write_text(path, args["content"])
        diff = unified(before, args["content"], args["path"])
        return {"bytes": written, "path": args["path"], "diff": diff}

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
    async def edit(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        path = resolve(session, args["path"])
        try:
            text = await session.files.read_text(path)
        except FileNotFoundError:
            return {"error": "not found", "path": args["path"]}
        after = replaced(text, args["old"], args["new"])
        if isinstance(after, dict):
            return {**after, "path": args["path"]}
        written = await session.files.write_text(path, after)
        return {
            "bytes": written,
            "path": args["path"],
            "replaced": args["old"],
            "with": args["new"],
            "diff": unified(text, after, args["path"]),
        }
