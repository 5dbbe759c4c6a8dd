"""What a folder would load once trusted, one line per thing, for every face's trust
question (docs/permissions.md, "Trusted folders"): its plugin files, its permission
rules, its mode files, its skills and its MCP servers with the command each would
start.

The folder is hostile: names and lines are shown with control characters escaped,
each line is cut at LINE_CAP characters, at most ITEMS_CAP lines are listed (then "and
N more"), and no file is read past READ_CAP bytes. An MCP server's `args` are shown as
written (no `${VAR}` is expanded, so no secret of the user's environment lands in the
question), masked as `/mcp` masks them (masking.py: a `--token=...`, the value after a
`--api-key`, a token-like value, a password in a URL, its own `env` values are `***`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..base import regular
from . import masking

ITEMS_CAP = 40  # lines listed, at most
LINE_CAP = 160  # characters of one line
READ_CAP = 64 * 1024  # bytes read of .agents/permissions or .mcp.json
CONTROL = re.compile(r"[\x00-\x1f\x7f\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """Control characters (newlines, escapes, bidi overrides) as `\\xNN` / `\\uNNNN`."""
    return CONTROL.sub(lambda m: repr(m.group())[1:-1] if ord(m.group()) < 0x100 else
                       f"\\u{ord(m.group()):04x}", text)  # fmt: skip


def cut(text: str) -> str:
    text = visible(text)
    return text if len(text) <= LINE_CAP else text[: LINE_CAP - 1] + "…"


def _read(path: Path) -> str:
    try:
        return regular.text(path, READ_CAP)
    except OSError:
        return ""


def _files(folder: Path, pattern: str) -> list[Path]:
    try:
        return sorted(p for p in folder.glob(pattern) if p.is_file())
    except OSError:
        return []


def _plugins(folder: Path) -> Iterator[str]:
    for path in _files(folder / ".agents" / "plugins", "*.py"):
        yield f"plugin (Python code that runs in the session): .agents/plugins/{path.name}"


def _rules(folder: Path) -> Iterator[str]:
    for line in _read(folder / ".agents" / "permissions").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield f"permission rule (.agents/permissions): {line}"


def _modes(folder: Path) -> Iterator[str]:
    for path in _files(folder / ".agents" / "modes", "*"):
        yield f"mode (.agents/modes): {path.name}"


def _skills(folder: Path) -> Iterator[str]:
    for path in _files(folder / ".agents" / "skills", "*/SKILL.md"):
        yield f"skill (.agents/skills, instructions the model follows): {path.parent.name}"


def _servers(folder: Path) -> Iterator[str]:
    try:
        servers = json.loads(_read(folder / ".mcp.json")).get("mcpServers")
    except (ValueError, AttributeError, RecursionError):
        servers = None
    if not isinstance(servers, dict):
        return
    for name, entry in servers.items():
        yield f"MCP server (.mcp.json) {name}: {_server_line(entry)}"


def _server_line(entry: Any) -> str:
    if not isinstance(entry, dict):
        return "(not an object)"
    if isinstance(entry.get("url"), str):
        return "connects to " + masking.url(entry["url"])
    command = entry.get("command")
    args = entry.get("args")
    env = entry.get("env")
    known = [v for v in env.values() if isinstance(v, str)] if isinstance(env, dict) else []
    words = [command if isinstance(command, str) else "?"]
    if isinstance(args, list):
        words += masking.args([a if isinstance(a, str) else json.dumps(a) for a in args], known)
    return "starts " + " ".join(words)


SOURCES = {
    ".agents/plugins": _plugins,
    ".agents/permissions": _rules,
    ".agents/modes": _modes,
    ".agents/skills": _skills,
    ".mcp.json": _servers,
}


def loads(folder: Path, skipped: list[Path]) -> list[str]:
    """What trusting `folder` would load of what was `skipped` (trust.trustable), one
    line each (bounded: ITEMS_CAP)."""
    found: list[str] = []
    more = 0
    names = {str(path.relative_to(folder)) for path in skipped}
    for name, source in SOURCES.items():
        if name not in names:
            continue
        for line in source(folder):
            if len(found) < ITEMS_CAP:
                found.append(cut(line))
            else:
                more += 1
    if more:
        found.append(f"and {more} more")
    return found
