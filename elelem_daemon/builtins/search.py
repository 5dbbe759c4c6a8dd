"""Built-in tools `glob` and `grep`: ripgrep when present, otherwise pure Python, both
in a child process (scan.py) through the tool runner, so that no search runs on the
event loop: each is cancelled with its turn and ends by its time limit.

Settings (environment): ELELEM_SEARCH_TIMEOUT, the most seconds one search may take
(default 30: it then ends with what it found and a note); ELELEM_GREP_FILE_TIMEOUT,
the most seconds of regular-expression matching per file in the pure-Python grep
(default 2: that file is skipped, and named). ripgrep's engine cannot backtrack.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from ..config import number
from ..registry import Plugin
from .files import target
from .shell import run

LIMIT = 1000
SKIP = [".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache"]
SCAN = str(Path(__file__).with_name("scan.py"))
PATTERN_CAP = 10_000
SEARCH_TIMEOUT = number("ELELEM_SEARCH_TIMEOUT", 30)
FILE_TIMEOUT = number("ELELEM_GREP_FILE_TIMEOUT", 2)
GRACE = 5.0  # past the search's own limit, the runner kills it


async def scan(verb: str, session: Any, root: Path, **spec: Any) -> dict[str, Any]:
    """Run scan.py VERB in a child process; its result, or the error it gave."""
    if len(spec.get("pattern", "")) > PATTERN_CAP:
        return {
            "error": f"pattern too long: {len(spec['pattern'])} characters (most {PATTERN_CAP})"
        }
    spec.update(
        root=str(root),
        base=str(session.cwd),
        skip=SKIP,
        limit=LIMIT,
        seconds=SEARCH_TIMEOUT,
        file_seconds=FILE_TIMEOUT,
    )
    argv = [sys.executable, "-I", "-S", SCAN, verb, json.dumps(spec)]
    result = await run(argv, session.cwd, SEARCH_TIMEOUT + GRACE)
    if result.get("exit_status") == 2:
        return {"error": result["content"].strip()}
    return {**result, "content": result["content"].removesuffix("\n")}


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
    async def glob_(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        root = target(session, args.get("path") or ".")
        return await scan("glob", session, root, pattern=args["pattern"])

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
        root = target(session, path)
        rg = shutil.which("rg")
        if rg:
            argv = [rg, "-n", "--no-heading", "--color=never"]
            argv += ["--glob", args["glob"]] if args.get("glob") else []
            return await run([*argv, "--", args["pattern"], path], session.cwd, SEARCH_TIMEOUT)
        return await scan("grep", session, root, pattern=args["pattern"], glob=args.get("glob"))
