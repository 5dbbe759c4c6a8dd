"""Built-in tools `read`, `write` and `edit`. Paths are relative to the session's cwd."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..registry import Plugin

PATH = {"type": "string", "description": "File path, relative to the working directory"}


def resolve(session: Any, path: str) -> Path:
    return (session.cwd / Path(path).expanduser()).resolve()


def register(plugin: Plugin) -> None:
    @plugin.tool("read", "Read file", {"path": PATH}, ["path"], ["open"])
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
    )
    async def write(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        path = resolve(session, args["path"])
        written = await session.files.write_text(path, args["content"])
        return {"bytes": written, "path": args["path"]}

    @plugin.tool(
        "edit",
        "Replace exactly one occurrence of text in file",
        {
            "path": PATH,
            "old": {"type": "string", "description": "Text to replace; must occur exactly once"},
            "new": {"type": "string", "description": "Replacement text"},
        },
        ["path", "old", "new"],
    )
    async def edit(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        path = resolve(session, args["path"])
        try:
            text = await session.files.read_text(path)
        except FileNotFoundError:
            return {"error": "not found", "path": args["path"]}
        count = text.count(args["old"]) if args["old"] else 0
        if count == 0:
            return {"error": "text not found", "path": args["path"]}
        if count > 1:
            return {
                "error": f"text occurs {count} times; include more context so it occurs once",
                "path": args["path"],
            }
        written = await session.files.write_text(path, text.replace(args["old"], args["new"], 1))
        return {
            "bytes": written,
            "path": args["path"],
            "replaced": args["old"],
            "with": args["new"],
        }
