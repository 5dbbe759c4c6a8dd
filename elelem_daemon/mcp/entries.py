"""Checking one server entry, in any form, into a `ServerConfig`; `${VAR}` expansion.

`entry()` takes a server's object (the files' and daemon's map form, or ACP's with its
`env`/`headers` lists made pairs by `pairs()`), checks every key and value, and gives a
ServerConfig, or None with the reasons added to `problems`. An unknown key is only a
warning. Bounds: MAX_ITEMS args, env entries or headers; MAX_TEXT characters per
string; MAX_NAME per server name. `expanded()` replaces `${NAME}` and
`${NAME:-default}` (docs/mcp.md, Variables).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from .config import Problems, ServerConfig, shown

MAX_ITEMS = 1000  # args, env entries, headers
MAX_TEXT = 64 * 1024  # one string
MAX_NAME = 64
TRANSPORTS = ("stdio", "http", "sse")
STDIO_KEYS = {"type", "command", "args", "env", "cwd", "timeout", "toolTimeout"}
HTTP_KEYS = {"type", "url", "headers", "timeout", "toolTimeout", "oauth"}
OAUTH_KEYS = {"clientId", "clientSecret", "scope", "callbackPort"}
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _name_problem(name: Any) -> str | None:
    if not isinstance(name, str) or not name.strip():
        return "a server needs a name (a non-empty string)"
    if len(name) > MAX_NAME:
        return f"a server name is at most {MAX_NAME} characters"
    if any(ch.isspace() or not ch.isprintable() or ch in ":/" for ch in name):
        return "a server name has no spaces, control characters, ':' or '/'"
    return None


def entry(name: Any, entry: Any, source: str, at: str, problems: Problems) -> ServerConfig | None:
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
    if kind is None and "type" not in entry:
        problems.add(at, 'no "command" (a stdio server) or "url" (http, sse)' + _meant(entry))
        return None
    if kind not in TRANSPORTS:
        problems.add(
            at,
            f'type must be one of {", ".join(TRANSPORTS)} (or give "command" or "url"), '
            f"got {shown(kind)}",
        )
        return None
    before = len(problems)
    known = STDIO_KEYS if kind == "stdio" else HTTP_KEYS
    for key in entry:
        if key not in known:
            where = f"{at}.{shown(key)}"
            near = _nearest(str(key), known)
            hint = f'; did you mean "{near}"?' if near else ""
            problems.add(where, f"unknown key for a {kind} server; ignored{hint}", warning=True)
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
        problems.add(f"{at}.url", f"must be an http:// or https:// URL, got {shown(url)}")
    if problems.errors(before):
        return None
    assert url is not None and headers is not None
    return ServerConfig(**common, url=url, headers=headers, oauth=oauth, source=source)


def _meant(entry: dict[Any, Any]) -> str:
    """`; "comand": did you mean "command"?` for keys close to a known one."""
    hints = []
    for key in entry:
        near = _nearest(str(key), STDIO_KEYS | HTTP_KEYS)
        if near is not None and near != key:
            hints.append(f'"{shown(key)}": did you mean "{near}"?')
    return "; " + "; ".join(hints) if hints else ""


def _nearest(key: str, known: set[str]) -> str | None:
    """The known key a misspelled one most likely meant (`comand`, `enviroment`)."""
    close = difflib.get_close_matches(key, sorted(known), 1, 0.6)
    if close:
        return close[0]
    longest = [k for k in sorted(known, key=len, reverse=True) if key.lower().startswith(k.lower())]
    return longest[0] if longest and len(longest[0]) >= 3 else None


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
    if isinstance(value, tuple):  # already pairs (ACP's list form, see pairs())
        return value
    if not isinstance(value, dict) or len(value) > MAX_ITEMS:
        problems.add(at, f'must be an object of at most {MAX_ITEMS} NAME: "value" pairs')
        return None
    out = []
    for key, item in value.items():
        if not key or "=" in key or "\0" in key or len(key) > MAX_NAME * 4:
            problems.add(f"{at}.{shown(key)}", "is not a usable name")
            return None
        text = _text(item, f"{at}.{shown(key)}", problems)
        if text is None:
            if item is None:
                problems.add(f"{at}.{shown(key)}", "must be a string")
            return None
        out.append((key, text))
    return tuple(out)


def pairs(value: Any, at: str, problems: Problems) -> tuple[tuple[str, str], ...] | None:
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
            problems.add(f"{at}.{shown(key)}", "unknown key; ignored", warning=True)
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


def expanded(
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
