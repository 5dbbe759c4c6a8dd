"""MCP server configuration: where it comes from, how it is checked, one shape for all.

Three sources, merged by server name, a later one winning (docs/mcp.md):
1. the user's `$XDG_CONFIG_HOME/elelem/mcp.json` (`~/.config/elelem/mcp.json`);
2. the project's `.mcp.json` in the session's folder, only when that folder is trusted;
3. the servers a face passes (ACP's `mcpServers` list, the daemon's `mcpServers` map).

The files use the format Claude Code and others use:
`{"mcpServers": {NAME: {"command", "args", "env", "cwd"} | {"type": "http"|"sse", "url",
"headers"}}}`. ACP's list form is `{name, command, args, env: [{name, value}]}` or
`{type: "http"|"sse", name, url, headers: [{name, value}]}`. Every form becomes a
`ServerConfig`. `${VAR}` and `${VAR:-default}` are expanded in the map form (files and
the daemon) in command, args, env, cwd, url and headers; ACP's values are literal.

Nothing here raises on bad input: each bad entry is a `Problem` (where, what), the
entry is left out (or kept, for a mere unknown key), and the rest loads; one entry is
checked (and expanded) by entries.py, with its bounds. No MCP SDK import: this runs for
every session.
"""

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ..base import regular

FILE_CAP = 1 << 20  # bytes of one mcp.json
MAX_SERVERS = 64


class Problem(NamedTuple):
    """A bad entry: where it is (`FILE: mcpServers.NAME.args`) and what is wrong.
    (NamedTuples, not dataclasses, and no `from __future__ import annotations`, whose
    string annotations NamedTuple compiles one by one: this module loads with every
    daemon, so it is kept cheap to import.)"""

    where: str
    message: str
    warning: bool = False  # the entry is still used (an unknown key is ignored)

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class ServerConfig(NamedTuple):
    """One server, whatever form it came in. Two configs that are `same` are one server."""

    name: str
    transport: str  # stdio | http | sse
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # set over the scrubbed environment
    cwd: str | None = None  # None: the session's folder
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None  # seconds to be up (connect + initialize + listing)
    tool_timeout: float | None = None  # seconds one tool call may take
    oauth: tuple[tuple[str, Any], ...] = ()  # clientId, clientSecret, scope, callbackPort
    source: str = "user"  # user | project | client
    origin: str = ""  # the file, or the face's request

    def same(self, other: "ServerConfig | None") -> bool:
        """The same server (wherever each was written)."""
        return other is not None and self._replace(origin="") == other._replace(origin="")

    def describe(self) -> str:
        """What the server runs (or where it is), secrets masked (masking.py)."""
        from ..safety import masking

        if self.transport == "stdio":
            shown = masking.args(self.args, [value for _, value in self.env])
            return " ".join([self.command or "", *shown])
        return masking.url(self.url or "")


class Problems(list[Problem]):
    def add(self, where: str, message: str, warning: bool = False) -> None:
        self.append(Problem(where, message, warning))

    def errors(self, since: int = 0) -> int:
        return sum(1 for problem in self[since:] if not problem.warning)


# -- where the files are -----------------------------------------------------------
def user_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "elelem" / "mcp.json"


def project_file(cwd: Path | str) -> Path:
    return Path(cwd) / ".mcp.json"


def load(
    cwd: Path | str, trusted: bool, env: Mapping[str, str] | None = None
) -> tuple[list[ServerConfig], Problems]:
    """The servers of the user's file and, if `trusted`, the project's; the project's
    entry wins for a name both define."""
    problems = Problems()
    merged: dict[str, ServerConfig] = {}
    sources = [(user_file(env), "user")]
    if trusted:
        project = project_file(cwd)
        if project.resolve() != sources[0][0].resolve():
            sources.append((project, "project"))
    from ..safety import vetted  # the user's file loads only as the user approved it

    for path, source in sources:
        if source == "user" and path.exists() and not vetted.approved(path):
            problems.add(str(path), f"{vetted.PROBLEM}; its servers are not started")
            continue
        for config in read_file(path, source, problems, env):
            merged[config.name] = config
    return list(merged.values()), problems


def read_file(
    path: Path, source: str, problems: Problems, env: Mapping[str, str] | None = None
) -> list[ServerConfig]:
    """The servers of one mcp.json; a missing file is no servers, a broken one a problem."""
    where = str(path)
    try:
        raw = regular.read(path, FILE_CAP + 1)  # never waits on a FIFO
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.add(where, f"unreadable ({exc.strerror or exc}); its servers are ignored")
        return []
    if len(raw) > FILE_CAP:
        problems.add(where, f"larger than {FILE_CAP} bytes; its servers are ignored")
        return []
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        problems.add(where, f"not valid JSON ({exc}); its servers are ignored")
        return []
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        problems.add(where, 'expected {"mcpServers": {NAME: {...}}}; its servers are ignored')
        return []
    return from_map(document["mcpServers"], source, where, problems, env)


# -- the forms ---------------------------------------------------------------------
def from_map(
    servers: Any,
    source: str,
    where: str,
    problems: Problems,
    env: Mapping[str, str] | None = None,
    expand: bool = True,
) -> list[ServerConfig]:
    """`{NAME: {...}}` (the files, and the daemon's `mcpServers`)."""
    from . import entries

    if not isinstance(servers, dict):
        problems.add(where, "mcpServers must be an object of NAME: {...}")
        return []
    found: list[ServerConfig] = []
    for name, entry in list(servers.items())[: MAX_SERVERS + 1]:
        if len(found) == MAX_SERVERS:
            problems.add(where, f"more than {MAX_SERVERS} servers; the rest are ignored")
            break
        at = f"{where}: mcpServers.{shown(name)}"
        config = entries.entry(name, entry, source, at, problems)
        if config is not None and expand:
            config = entries.expanded(config, at, problems, env)
        if config is not None:
            found.append(config._replace(origin=where))
    return found


def from_acp(servers: Any, where: str = "session/new") -> tuple[list[ServerConfig], Problems]:
    """ACP's `mcpServers` list: `{name, command, args, env: [{name, value}]}` (stdio) or
    `{type: "http"|"sse", name, url, headers: [{name, value}]}`. Values are literal."""
    from . import entries

    problems = Problems()
    if not isinstance(servers, list):
        problems.add(where, "mcpServers must be a list")
        return [], problems
    found: dict[str, ServerConfig] = {}
    for index, entry in enumerate(servers):
        at = f"{where}: mcpServers[{index}]"
        if index == MAX_SERVERS:
            problems.add(where, f"more than {MAX_SERVERS} servers; the rest are ignored")
            break
        if not isinstance(entry, dict):
            problems.add(at, "must be an object")
            continue
        name = entry.get("name")
        pairs = {key: value for key, value in entry.items() if key not in ("name", "_meta")}
        for key in ("env", "headers"):
            if key in pairs:
                pairs[key] = entries.pairs(pairs[key], f"{at}.{key}", problems)
                if pairs[key] is None:
                    break
        else:
            config = entries.entry(name, pairs, "client", at, problems)
            if config is not None:
                found[config.name] = config._replace(origin=where)
    return list(found.values()), problems


def from_face(
    servers: Any, where: str = "session/new", env: Mapping[str, str] | None = None
) -> tuple[list[ServerConfig], Problems]:
    """A face's `mcpServers`: ACP's list, or the files' map (expanded as they are)."""
    if isinstance(servers, list):
        return from_acp(servers, where)
    problems = Problems()
    return from_map(servers, "client", where, problems, env), problems


def merge(*layers: Iterable[ServerConfig]) -> list[ServerConfig]:
    """Layers in order (user, project, client): a later one wins per server name."""
    merged: dict[str, ServerConfig] = {}
    for layer in layers:
        for config in layer:
            merged[config.name] = config
    return list(merged.values())


def shown(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
