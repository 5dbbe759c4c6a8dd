"""Settings shared by every face: which provider and model a new session gets.

`choose_provider` is the one rule every face follows: the provider a request names,
else the face's own (`-p`), else `default_provider()`; the model a request names, else
the face's own (`-m`) but only for the face's provider (a model belongs to a provider).

The order (docs/providers.md):
1. `ELELEM_PROVIDER`;
2. `provider = "NAME"` in `$XDG_CONFIG_HOME/elelem/config.toml` (`~/.config/...`);
3. `anthropic` when `ANTHROPIC_API_KEY` is set;
4. `openai` when `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set;
5. the provider `elelem login` kept (signin.py), unless the environment sets its
   variables itself;
6. `ollama` when an Ollama server answers at `OLLAMA_HOST` within half a second;
7. the `stub`, with a one-line notice on stderr saying how to choose (once per process).

`default_provider` runs only the steps needed, so a set `ELELEM_PROVIDER` costs nothing,
and it runs only when no provider is named.

Also the state folder every part keeps its files under (`state_dir`): the stored
sessions, the checkpoints; the user's settings folder (`config_dir`); and `number`, the
one reading of a numeric setting such as ELELEM_TOOL_TIMEOUT.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from . import keys, regular
from .errors import ElelemError
from .log import notice

PROBE_TIMEOUT = 0.5
_noticed = False
NOTICE = (
    "elelem: no provider configured, using the stub. Choose one with -p NAME, "
    "ELELEM_PROVIDER, `elelem login`, or set ANTHROPIC_API_KEY, OPENAI_API_KEY / "
    "OPENAI_BASE_URL, or start Ollama (see docs/providers.md)"
)


def number(
    name: str, default: float, minimum: float = 0.0, env: Mapping[str, str] | None = None
) -> float:
    """A numeric setting from the environment (`ELELEM_TOOL_TIMEOUT=60`). Absent or
    empty: `default`. Not a finite number, or below `minimum`: `default` as well, and a
    notice line names the setting, so a typo neither stops elelem nor goes unseen."""
    env = os.environ if env is None else env
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < minimum:
        notice(f"elelem: {name}={raw[:40]!r} is not a number >= {minimum:g}; using {default:g}")
        return default
    return value


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where elelem keeps its state, read on every call: `$ELELEM_STATE_DIR`, else
    `$XDG_STATE_HOME/elelem`, else `~/.local/state/elelem`."""
    env = os.environ if env is None else env
    if state := env.get("ELELEM_STATE_DIR"):
        return Path(state).expanduser()
    xdg = env.get("XDG_STATE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state") / "elelem"


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's elelem folder, read on every call: `$XDG_CONFIG_HOME/elelem`, else
    `~/.config/elelem` (permissions, trusted folders, config.toml, mcp.json)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".config") / "elelem"


def config_path(env: Mapping[str, str]) -> Path:
    return config_dir(env) / "config.toml"


CONFIG_CAP = 1 << 20  # bytes of config.toml read, at most


def config_table(env: Mapping[str, str]) -> dict[str, Any]:
    """config.toml as a table (none when there is no file); ElelemError for one that
    cannot be read, is past CONFIG_CAP or is not TOML. The one reader of the file."""
    path = config_path(env)
    if not path.is_file():
        return {}
    import tomllib

    try:
        data = regular.read(path, CONFIG_CAP + 1)  # never waits on a FIFO
        if len(data) > CONFIG_CAP:
            raise ValueError(f"larger than {CONFIG_CAP} bytes")
        return tomllib.loads(data.decode("utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError, TOMLDecodeError included
        raise ElelemError(f"cannot read {path}: {exc}") from None


def configured_provider(env: Mapping[str, str]) -> str | None:
    """`provider` from the config file, if the file exists; a broken file is an error."""
    path = config_path(env)
    settings = config_table(env)
    name = settings.get("provider")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ElelemError(f'{path}: provider must be a name such as "anthropic", got {name!r}')
    return name.strip() if name else None


def ollama_answers(env: Mapping[str, str], timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether an Ollama server answers `GET /api/version` at OLLAMA_HOST.

    Nothing listening (the common case: no Ollama) is known from one TCP connect,
    before http.client and its email modules are imported (~10 ms of every start that
    chooses its provider by this probe)."""
    import socket
    from urllib.parse import urlsplit

    host = (env.get("OLLAMA_HOST") or "127.0.0.1:11434").strip()
    try:
        url = urlsplit(host if "://" in host else f"http://{host}")
        address = (url.hostname or "127.0.0.1", url.port or 11434)
        socket.create_connection(address, timeout=timeout).close()
    except (OSError, ValueError):  # refused, unreachable, a bad port or host
        return False
    import http.client
    import json

    kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    try:
        connection = kind(*address, timeout=timeout)
        try:
            connection.request("GET", url.path.rstrip("/") + "/api/version")
            response = connection.getresponse()
            return response.status == 200 and "version" in json.loads(response.read(4096))
        finally:
            connection.close()
    except (OSError, ValueError, http.client.HTTPException):
        return False


def default_provider(env: Mapping[str, str] | None = None, notice: TextIO | None = None) -> str:
    """The provider for a session that names none (the order is in the module docstring)."""
    env = keys.environ() if env is None else env  # the keys are out of os.environ
    if chosen := env.get("ELELEM_PROVIDER", "").strip():
        return chosen
    if configured := configured_provider(env):
        return configured
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    if env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL"):
        return "openai"
    from . import signin

    if signed_in := signin.provider(env):
        return signed_in
    if ollama_answers(env):
        return "ollama"
    global _noticed
    if not _noticed:
        _noticed = True
        print(NOTICE, file=notice or sys.stderr, flush=True)
    return "stub"


def choose_provider(
    provider: str | None = None,
    model: str | None = None,
    face_provider: str | None = None,
    face_model: str | None = None,
) -> tuple[str, str | None]:
    """The provider and model of a new session (the rule is in the module docstring).

    `provider`/`model`: what the request names; `face_provider`/`face_model`: what the
    face was started with (`elelem daemon -p P -m M`)."""
    if provider and not face_model:
        return provider, model  # nothing of the face's applies: no need to look for it
    own = face_provider or default_provider()
    chosen = provider or own
    return chosen, model or (face_model if chosen == own else None)
