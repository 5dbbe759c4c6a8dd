"""Built-in tools `glob` and `grep`: ripgrep when present, otherwise pure Python, both
in a child process (scan.py) through the tool runner, so that no search runs on the
event loop: each is cancelled with its turn and ends by its time limit. A glob whose
pattern holds a literal (`**/*.py`: `.py`) runs `find` itself through the runner
instead (found_glob, issue 22: no Python child to start) and applies scan.py's rule,
order, limit and output cap to what it lists, in a thread; the answer is scan.py's.

Settings (environment): ELELEM_SEARCH_TIMEOUT, the most seconds one search may take
(default 30: it then ends with what it found and a note); ELELEM_GREP_FILE_TIMEOUT,
the most seconds of regular-expression matching per file in the pure-Python grep
(default 2: that file is skipped, and named). ripgrep's engine cannot backtrack.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from ..base.config import number
from ..ports import SessionView
from ..registry import Plugin
from . import listed, shell
from .files import target
from .shell import Capped, run

LIMIT = 1000
SKIP = [".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache"]
SCAN = str(Path(__file__).with_name("scan.py"))
PATTERN_CAP = 10_000
SEARCH_TIMEOUT = number("ELELEM_SEARCH_TIMEOUT", 30)
FILE_TIMEOUT = number("ELELEM_GREP_FILE_TIMEOUT", 2)
GRACE = 5.0  # past the search's own limit, the runner kills it
LISTING_CAP = 64 << 20  # bytes of `find` output a glob reads from the daemon, at most


async def scan(verb: str, session: SessionView, root: Path, **spec: Any) -> dict[str, Any]:
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
    if verb == "glob" and (found := await found_glob(root, spec["pattern"], str(session.cwd))):
        return found
    argv = [sys.executable, "-I", "-S", SCAN, verb, json.dumps(spec)]
    result = await run(argv, session.cwd, SEARCH_TIMEOUT + GRACE)
    if result.get("exit_status") == 2:
        return {"error": result["content"].strip()}
    return {**result, "content": result["content"].removesuffix("\n")}


async def found_glob(root: Path, pattern: str, base: str) -> dict[str, Any] | None:
    """A glob whose pattern holds a literal, from the daemon (issue 22: no Python child to
    start): `find` lists the files whose path holds it (listed.py), then the glob rule,
    the order, the limit and the output cap of scan.py are applied here, in a thread.
    The same answer as scan.py's; None when this cannot tell it (no GNU find, no literal,
    a name that is not UTF-8, too much output): scan.py then answers."""
    match, literal = listed.glob_pattern(pattern)
    find = await asyncio.to_thread(listed.gnu, "find") if literal else None
    argv = listed.find_argv(find, SKIP, literal) if find and root.is_dir() else None
    if argv is None:
        return None
    timeout = SEARCH_TIMEOUT + GRACE
    listing = await run(argv, root, timeout, LISTING_CAP, env={"LC_ALL": "C"}, raw=True)
    if "error" in listing:  # find ran out of time: what scan.py says then
        stopped = f"[stopped after {SEARCH_TIMEOUT:g} s: the search took too long]"
        return {"exit_status": 1, "content": stopped}
    if listing["truncated"] or listing["exit_status"] not in (0, 1):
        return None
    try:
        names = listing["content"].decode("utf-8").split("\0")[:-1]
    except UnicodeDecodeError:
        return None
    names = [name[2:] if name.startswith("./") else name for name in names]
    out = await asyncio.to_thread(listed.globbed, names, match, literal, str(root), base, LIMIT)
    shown = Capped(shell.OUTPUT_CAP)  # what run() keeps of scan.py's output
    shown.add("".join(f"{line}\n" for line in out).encode("utf-8", "surrogateescape"))
    return {"exit_status": 0 if out else 1, "content": shown.text().removesuffix("\n")}


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
        fine=(0, 1),  # 1: nothing found, not a failure
    )
    async def glob_(session: SessionView, args: dict[str, Any]) -> dict[str, Any]:
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
        fine=(0, 1),  # 1: nothing found, not a failure
    )
    async def grep_(session: SessionView, args: dict[str, Any]) -> dict[str, Any]:
        path = args.get("path") or "."
        root = target(session, path)
        rg = shutil.which("rg")
        if rg:
            argv = [rg, "-n", "--no-heading", "--color=never"]
            argv += ["--glob", args["glob"]] if args.get("glob") else []
            return await run([*argv, "--", args["pattern"], path], session.cwd, SEARCH_TIMEOUT)
        return await scan("grep", session, root, pattern=args["pattern"], glob=args.get("glob"))
