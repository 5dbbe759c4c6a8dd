"""How an MCP server's tools and prompts are named in elelem (docs/mcp.md, Names).

A tool is `PREFIX__TOOL`, a prompt the slash command `/PREFIX:PROMPT`:
- PREFIX is the server's name with every character outside `[A-Za-z0-9_-]` made `_`,
  runs of `_` made one, and no `_` at either end (so the first `__` of a tool name is
  where the prefix ends), at most 24 characters; `mcp` if nothing is left;
- TOOL is the tool's name with every character outside `[A-Za-z0-9_-]` made `_`;
- the whole is at most 64 characters (what providers accept: `^[a-zA-Z0-9_-]{1,64}$`).

When a name would be too long, or is already taken (two servers whose names clean to
the same prefix; two tools whose names clean to the same text), it is cut and ends
with `_` and 8 hex digits of the SHA-256 of the original names, so it is deterministic:
the same servers and tools always get the same names. Who keeps the plain form is
decided in sorted order of the original names.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX = 64
MAX_PREFIX = 24
OUTSIDE = re.compile(r"[^A-Za-z0-9_-]")


def clean(text: str) -> str:
    return OUTSIDE.sub("_", text)


def digest(*parts: str, size: int = 8) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:size]


def _prefix(server: str) -> str:
    prefix = re.sub(r"_+", "_", clean(server)).strip("_")
    return prefix or "mcp"


def prefixes(servers: Iterable[str]) -> dict[str, str]:
    """Each server's prefix, unique among them."""
    taken: set[str] = set()
    out: dict[str, str] = {}
    for server in sorted(set(servers)):
        prefix = _prefix(server)
        if len(prefix) > MAX_PREFIX or prefix in taken:
            prefix = f"{prefix[: MAX_PREFIX - 9].rstrip('_')}_{digest(server)}"
        taken.add(prefix)
        out[server] = prefix
    return out


def _unique(plain: str, limit: int, taken: set[str], *original: str) -> str:
    name = plain
    salt = 0
    while len(name) > limit or name in taken:
        tail = digest(*original, *(["%d" % salt] if salt else []))
        name = f"{plain[: limit - 9]}_{tail}"
        salt += 1
    taken.add(name)
    return name


def tool_names(prefix: str, tools: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Each of a server's tools as `PREFIX__TOOL`, unique (also among `taken`)."""
    used = set(taken)
    return {
        tool: _unique(f"{prefix}__{clean(tool)}", MAX, used, prefix, tool)
        for tool in sorted(set(tools))
    }


def prompt_names(prefix: str, prompts: Iterable[str]) -> dict[str, str]:
    """Each of a server's prompts as the command name `PREFIX:PROMPT` (without the `/`)."""
    used: set[str] = set()
    return {
        prompt: _unique(f"{prefix}:{clean(prompt)}", MAX, used, prefix, prompt)
        for prompt in sorted(set(prompts))
    }
