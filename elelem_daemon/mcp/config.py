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
entry is left out (or kept, for a mere unknown key), and the rest loads. Sizes are
bounded (LIMITS). No MCP SDK import: this runs for every session.
"""

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

FILE_CAP = 1 << 20  # bytes of one mcp.json
MAX_SERVERS = 64
MAX_ITEMS = 1000  # args, env entries, headers
MAX_TEXT = 64 * 1024  # one string
MAX_NAME = 64
TRANSPORTS = ("stdio", "http", "sse")
STDIO_KEYS = {"type", "command", "args", "env", "cwd", "timeout", "toolTimeout"}
HTTP_KEYS = {"type", "url", "headers", "timeout", "toolTimeout", "oauth"}
OAUTH_KEYS = {"clientId", "clientSecret", "scope", "callbackPort"}
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


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
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args])
        return self.url or ""


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
    for path, source in sources:
        for config in read_file(path, source, problems, env):
            merged[config.name] = config
    return list(merged.values()), problems


def read_file(
    path: Path, source: str, problems: Problems, env: Mapping[str, str] | None = None
) -> list[ServerConfig]:
    """The servers of one mcp.json; a missing file is no servers, a broken one a problem."""
    where = str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(FILE_CAP + 1)
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
    if not isinstance(servers, dict):
        problems.add(where, "mcpServers must be an object of NAME: {...}")
        return []
    found: list[ServerConfig] = []
    for name, entry in list(servers.items())[: MAX_SERVERS + 1]:
        if len(found) == MAX_SERVERS:
            problems.add(where, f"more than {MAX_SERVERS} servers; the rest are ignored")
            break
        at = f"{where}: mcpServers.{_shown(name)}"
        config = _entry(name, entry, source, at, problems)
        if config is not None and expand:
            config = _expanded(config, at, problems, env)
        if config is not None:
            found.append(config._replace(origin=where))
    return found


def from_acp(servers: Any, where: str = "session/new") -> tuple[list[ServerConfig], Problems]:
    """ACP's `mcpServers` list: `{name, command, args, env: [{name, value}]}` (stdio) or
    `{type: "http"|"sse", name, url, headers: [{name, value}]}`. Values are literal."""
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
                pairs[key] = _pairs(pairs[key], f"{at}.{key}", problems)
                if pairs[key] is None:
                    break
        else:
            config = _entry(name, pairs, "client", at, problems)
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


# -- checking one entry ------------------------------------------------------------
def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _name_problem(name: Any) -> str | None:
    if not isinstance(name, str) or not name.strip():
        return "a server needs a name (a non-empty string)"
    if len(name) > MAX_NAME:
        return f"a server name is at most {MAX_NAME} characters"
    if any(ch.isspace() or not ch.isprintable() or ch in ":/" for ch in name):
        return "a server name has no spaces, control characters, ':' or '/'"
    return None


def _entry(name: Any, entry: Any, source: str, at: str, problems: Problems) -> ServerConfig | None:
    if (problem := _name_problem(name)) is not None:
        problems.add(at, problem)
        return None
    if not isinstance(entry, dict):
        problems.add(at, "must be an object")
        return None
    kind = entry.get("type")
    if kind is None:
        kind = "stdio" if "command" in entry else "http" if "url" in entry else None
    if kind == "streamable-http":
        kind = "http"
    if kind not in TRANSPORTS:
        problems.add(
            at,
            f'type must be one of {", ".join(TRANSPORTS)} (or give "command" or "url"), '
            f"got {_shown(kind)}",
        )
        return None
    before = len(problems)
    known = STDIO_KEYS if kind == "stdio" else HTTP_KEYS
    for key in entry:
        if key not in known:
            where = f"{at}.{_shown(key)}"
            problems.add(where, f"unknown key for a {kind} server; ignored", warning=True)
    timeout = _seconds(entry, "timeout", at, problems)
    tool_timeout = _seconds(entry, "toolTimeout", at, problems)
    common = dict(name=name, transport=kind, timeout=timeout, tool_timeout=tool_timeout)
    if kind == "stdio":
        command = _text(entry.get("command"), f"{at}.command", problems, required=True)
        args = _texts(entry.get("args", []), f"{at}.args", problems)
        env = _mapping(entry.get("env", {}), f"{at}.env", problems)
        cwd = _text(entry.get("cwd"), f"{at}.cwd", problems)
        if problems.errors(before):
            return None
        assert command is not None and args is not None and env is not None
        return ServerConfig(**common, command=command, args=args, env=env, cwd=cwd, source=source)
    url = _text(entry.get("url"), f"{at}.url", problems, required=True)
    headers = _mapping(entry.get("headers", {}), f"{at}.headers", problems)
    oauth = _oauth(entry.get("oauth"), f"{at}.oauth", problems)
    if url is not None and not re.match(r"https?://[^/\s]+", url):
        problems.add(f"{at}.url", f"must be an http:// or https:// URL, got {_shown(url)}")
    if problems.errors(before):
        return None
    assert url is not None and headers is not None
    return ServerConfig(**common, url=url, headers=headers, oauth=oauth, source=source)


def _text(value: Any, at: str, problems: Problems, required: bool = False) -> str | None:
    if value is None:
        if required:
            problems.add(at, "is required")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        problems.add(at, f"must be a{' non-empty' if required else ''} string")
        return None
    if len(value) > MAX_TEXT or "\0" in value:
        problems.add(at, f"must be at most {MAX_TEXT} characters, without NUL")
        return None
    return value


def _texts(value: Any, at: str, problems: Problems) -> tuple[str, ...] | None:
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        problems.add(at, f"must be a list of at most {MAX_ITEMS} strings")
        return None
    out = []
    for index, item in enumerate(value):
        text = _text(item, f"{at}[{index}]", problems)
        if text is None:
            if item is None:
                problems.add(f"{at}[{index}]", "must be a string")
            return None
        out.append(text)
    return tuple(out)


def _mapping(value: Any, at: str, problems: Problems) -> tuple[tuple[str, str], ...] | None:
    if isinstance(value, tuple):  # already pairs (ACP's list form)
        return value
    if not isinstance(value, dict) or len(value) > MAX_ITEMS:
        problems.add(at, f'must be an object of at most {MAX_ITEMS} NAME: "value" pairs')
        return None
    out = []
    for key, item in value.items():
        if not key or "=" in key or "\0" in key or len(key) > MAX_NAME * 4:
            problems.add(f"{at}.{_shown(key)}", "is not a usable name")
            return None
        text = _text(item, f"{at}.{_shown(key)}", problems)
        if text is None:
            if item is None:
                problems.add(f"{at}.{_shown(key)}", "must be a string")
            return None
        out.append((key, text))
    return tuple(out)


def _pairs(value: Any, at: str, problems: Problems) -> tuple[tuple[str, str], ...] | None:
    """ACP's `[{name, value}]` as pairs."""
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        problems.add(at, f"must be a list of at most {MAX_ITEMS} {{name, value}} objects")
        return None
    mapping: dict[str, Any] = {}
    for index, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            problems.add(f"{at}[{index}]", "must be {name, value} with a string name")
            return None
        mapping[item["name"]] = item.get("value")
    return _mapping(mapping, at, problems)


def _seconds(entry: dict[str, Any], key: str, at: str, problems: Problems) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86400:
        problems.add(f"{at}.{key}", "must be a number of seconds, 0 < N <= 86400")
        return None
    return float(value)


def _oauth(value: Any, at: str, problems: Problems) -> tuple[tuple[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        problems.add(at, "must be an object")
        return ()
    out: list[tuple[str, Any]] = []
    for key, item in value.items():
        if key not in OAUTH_KEYS:
            problems.add(f"{at}.{_shown(key)}", "unknown key; ignored", warning=True)
        elif key == "callbackPort":
            if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item <= 65535:
                problems.add(f"{at}.{key}", "must be a port number")
            else:
                out.append((key, item))
        elif (text := _text(item, f"{at}.{key}", problems)) is not None:
            out.append((key, text))
    return tuple(out)


# -- ${VAR} -------------------------------------------------------------------------
def expand(text: str, env: Mapping[str, str], missing: list[str]) -> str:
    """`${VAR}` and `${VAR:-default}` from env; an unset VAR without default is noted."""

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = env.get(name)
        if found:
            return found
        if default is not None:
            return default
        if found is None:
            missing.append(name)
        return ""

    return VARIABLE.sub(value, text)


def _expanded(
    config: ServerConfig, at: str, problems: Problems, env: Mapping[str, str] | None
) -> ServerConfig | None:
    from .environment import lookup

    source = lookup() if env is None else env
    missing: list[str] = []

    def one(text: str | None) -> str | None:
        return None if text is None else expand(text, source, missing)

    def pairs(items: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        return tuple((key, expand(value, source, missing)) for key, value in items)

    done = config._replace(
        command=one(config.command),
        args=tuple(expand(arg, source, missing) for arg in config.args),
        env=pairs(config.env),
        cwd=one(config.cwd),
        url=one(config.url),
        headers=pairs(config.headers),
    )
    if missing:
        names = ", ".join(sorted(set(missing)))
        problems.add(at, f"${{{names}}} is not set (write ${{NAME:-default}} for a default)")
        return None
    return done
