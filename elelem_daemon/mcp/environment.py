"""What a stdio server's process inherits, and what makes it die with the daemon.

- `lookup()`: the variables `${VAR}` reads in a config: the whole environment, secrets
  included (a config that names `${GITHUB_TOKEN}` gets it; nothing else does).
- `server_env(config)`: the environment a server starts with: the one tool processes
  get (secrets such as provider keys removed), then the config's `env` over it.
- `guards()`: the pre-exec function (parent-death signal) and the reaper's watch and
  forget for the server's process group, so it dies with the daemon even on SIGKILL.

These are the same functions `execute` uses, looked up where they live now
(`elelem_daemon.keys` and `elelem_daemon.procs` once they exist; before that, the
shell's `tool_env` and no guards): one place to switch.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from typing import Any

from .config import ServerConfig

Hook = Callable[[int], None]


def _keys() -> Any:
    try:
        return importlib.import_module("elelem_daemon.keys")
    except ImportError:
        return None


def lookup() -> Mapping[str, str]:
    keys = _keys()
    return keys.environ() if keys is not None else dict(os.environ)


def tool_env() -> dict[str, str]:
    keys = _keys()
    if keys is not None:
        return dict(keys.tool_env())
    from ..builtins.shell import tool_env as shell_env

    return shell_env()


def server_env(config: ServerConfig) -> dict[str, str]:
    return {**tool_env(), **dict(config.env)}


def guards() -> tuple[Callable[[], None] | None, Hook, Hook]:
    """(pre_exec, watch(pgid), forget(pgid)) as `execute` has them."""
    from .. import procs

    keys = _keys()
    if keys is not None and hasattr(keys, "guard"):
        keys.guard()
    death_signal = getattr(procs, "death_signal", None)
    reaper = getattr(procs, "reaper", None)
    pre_exec = death_signal() if death_signal is not None else None
    if reaper is None:
        return pre_exec, lambda pgid: None, lambda pgid: None
    reaper.start()
    return pre_exec, reaper.watch, reaper.forget
