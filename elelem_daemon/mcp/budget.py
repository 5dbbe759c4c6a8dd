"""Budget: a bound on the bytes of MCP tools offered to the model in every request.

Every request carries the whole tool list, so one server listing 400 tools with 10 kB
descriptions would put megabytes into each of them (64 servers are allowed). The MCP
tools of a session together may take at most `ELELEM_MCP_TOOLS_CAP` bytes (256 KiB by
default), a tool's size being its name, description and input schema as JSON. Over
that, tools are cut: the largest server's (by its tools' total) largest tools first,
then that server's next, then the next server's, until the rest fit. Each server that
lost tools says so in its status (`/mcp`): `N of M tools left out: ...` (docs/mcp.md,
Bounds). Built-in and plugin tools do not count and are never cut.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

CAP = "ELELEM_MCP_TOOLS_CAP"
DEFAULT_CAP = 256 * 1024


def size(name: str, description: str, schema: Any) -> int:
    """A tool's bytes as the model is sent it (close enough for every provider)."""
    body = {"name": name, "description": description, "input_schema": schema}
    return len(json.dumps(body, ensure_ascii=False, default=str).encode("utf-8", "replace"))


def cap() -> int:
    from .server import setting

    return int(setting(CAP, float(DEFAULT_CAP)))


def cut(offered: Mapping[str, Sequence[Any]], limit: int) -> dict[str, list[str]]:
    """Which tools (their `.remote` names) of each server to leave out so that the
    `.size`s of the rest come to at most limit; servers that lose none are absent."""
    total = sum(tool.size for tools in offered.values() for tool in tools)
    out: dict[str, list[str]] = {}
    if total <= limit:
        return out
    by_weight = sorted(offered, key=lambda name: (-sum(t.size for t in offered[name]), name))
    for name in by_weight:
        for tool in sorted(offered[name], key=lambda t: (-t.size, t.remote)):
            if total <= limit:
                return out
            out.setdefault(name, []).append(tool.remote)
            total -= tool.size
    return out


def problem(left: int, of: int, total: int, limit: int) -> str:
    return (
        f"{left} of {of} tools left out: the MCP tools came to {total} bytes, over "
        f"{CAP} ({limit} bytes); the largest servers' largest tools are cut first"
    )
