"""Built-in tools `glob` and `grep`: ripgrep when present, otherwise pure Python."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
from pathlib import Path
from typing import Any

from ..registry import Plugin
from .files import resolve
from .shell import run

LIMIT = 1000
SKIP = {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache"}


def walk(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        found.extend(Path(folder) / name for name in sorted(files))
    return found


def relative(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def glob(root: Path, pattern: str, base: Path) -> list[str]:
    matches = [
        relative(path, base)
        for path in walk(root)
        if fnmatch.fnmatch(relative(path, root), pattern) or fnmatch.fnmatch(path.name, pattern)
    ]
    return matches[:LIMIT]


def grep(root: Path, pattern: str, file_glob: str | None, base: Path) -> list[str]:
    regex = re.compile(pattern)
    lines: list[str] = []
    files = [root] if root.is_file() else walk(root)
    for path in files:
        if file_glob and not fnmatch.fnmatch(path.name, file_glob):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # binary or unreadable: ripgrep skips these too
        for number, line in enumerate(text.splitlines(), 1):
            if regex.search(line):
                lines.append(f"{relative(path, base)}:{number}:{line}")
                if len(lines) >= LIMIT:
                    return lines
    return lines


def listing(lines: list[str]) -> dict[str, Any]:
    return {"exit_status": 0 if lines else 1, "content": "\n".join(lines)}


def register(plugin: Plugin) -> None:
    @plugin.tool(
        "glob",
        "Find files matching pattern",
        {
            "pattern": {"type": "string", "description": "Glob such as **/*.py or *.md"},
            "path": {"type": "string", "description": "Folder to search (default: cwd)"},
        },
        ["pattern"],
        kind="search",
    )
    def glob_(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        root = resolve(session, args.get("path") or ".")
        return listing(glob(root, args["pattern"], session.cwd))

    @plugin.tool(
        "grep",
        "Search file contents",
        {
            "pattern": {"type": "string", "description": "Regular expression"},
            "path": {"type": "string", "description": "File or folder (default: cwd)"},
            "glob": {"type": "string", "description": "Only files matching this glob"},
        },
        ["pattern"],
        kind="search",
    )
    async def grep_(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        path = args.get("path") or "."
        rg = shutil.which("rg")
        if rg:
            argv = [rg, "-n", "--no-heading", "--color=never"]
            argv += ["--glob", args["glob"]] if args.get("glob") else []
            return await run([*argv, "--", args["pattern"], path], session.cwd)
        try:
            root = resolve(session, path)
            return listing(grep(root, args["pattern"], args.get("glob"), session.cwd))
        except re.error as exc:
            return {"error": f"invalid pattern: {exc}"}
