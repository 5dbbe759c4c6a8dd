"""The sign-in: the provider `elelem login` chose and checked, kept for elelem alone.

One file, `$XDG_CONFIG_HOME/elelem/credentials.json` (`~/.config/elelem/...`), mode
0600 in a 0700 folder, written whole and renamed into place, so no reader ever sees
half of it. It holds the provider's name and the variables its provider reads
(`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `OLLAMA_HOST`...):

    {"provider": "openai", "env": {"OPENAI_BASE_URL": "...", "OPENAI_API_KEY": "..."}}

The environment wins, by group: when any variable of a provider's group is set in the
environment, the sign-in's values of that group are not used at all, so a key from the
environment is never sent to a server the sign-in named, nor the other way round
(docs/providers.md, "Signing in"). `keys.get` reads these values last; `keys.values`
includes them, so they are masked like any key; tools never get them (`keys.tool_env`
reads only the environment).

Nothing here trusts the file: it is opened without following a link and without
blocking (a FIFO planted there freezes nothing), must be a regular file of at most
`CAP` bytes, and anything that is not the shape above reads as no sign-in.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CAP = 64 * 1024
NAME = "credentials.json"
# The variables each provider reads; a sign-in may set only these.
GROUPS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "ollama": ("OLLAMA_HOST",),
}
SECRETS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


def path(env: Mapping[str, str] | None = None) -> Path:
    from .config import config_dir

    return config_dir(env) / NAME


def read(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The stored sign-in, or {} (no file, or one that is not a sign-in)."""
    where = path(env)
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return {}
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > CAP:
            return {}
        data = os.read(fd, CAP + 1)
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        stored = json.loads(data)
    except ValueError:
        return {}
    return stored if valid(stored) else {}


def valid(stored: object) -> bool:
    if not isinstance(stored, dict):
        return False
    provider, values = stored.get("provider"), stored.get("env")
    if provider not in GROUPS or not isinstance(values, dict):
        return False
    return all(
        name in GROUPS[provider] and isinstance(value, str) and len(value) < 4096
        for name, value in values.items()
    )


def provider(env: Mapping[str, str]) -> str | None:
    """The signed-in provider, unless the environment sets that provider's variables
    itself (then the environment decides, as it always did)."""
    stored = read(env)
    name = stored.get("provider")
    if not name or any(env.get(var) for var in GROUPS[name]):
        return None
    return str(name)


def value(name: str, env: Mapping[str, str]) -> str:
    """A sign-in variable (`OPENAI_API_KEY`), "" when the environment sets any of its
    group or there is none."""
    stored = read(env)
    group = GROUPS.get(stored.get("provider", ""), ())
    if name not in group or any(env.get(var) for var in group):
        return ""
    return str(stored["env"].get(name, ""))


def secrets(env: Mapping[str, str] | None = None) -> list[str]:
    """The sign-in's secret values, for masking."""
    values = read(env).get("env", {})
    return [values[name] for name in SECRETS if values.get(name)]


def save(provider: str, values: Mapping[str, str], env: Mapping[str, str] | None = None) -> Path:
    """Keep a checked sign-in: 0600, in a 0700 folder, written whole then renamed."""
    stored = {"provider": provider, "env": {k: v for k, v in values.items() if v}}
    if not valid(stored):
        raise ValueError(f"not a sign-in for {provider}: {sorted(values)}")
    where = path(env)
    where.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = where.with_name(f".{NAME}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(stored, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, where)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return where


def forget(env: Mapping[str, str] | None = None) -> bool:
    """`elelem logout`: remove the sign-in; whether there was one."""
    try:
        path(env).unlink()
    except FileNotFoundError:
        return False
    return True
