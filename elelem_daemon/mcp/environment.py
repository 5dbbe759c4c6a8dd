"""What a stdio server's process inherits, and what makes it die with the daemon.

- `lookup()`: the variables `${VAR}` reads in a config: the whole environment, secrets
  included (a config that names `${GITHUB_TOKEN}` gets it; nothing else does).
- `server_env(config)`: the environment a server starts with: the one tool processes
  get (secrets such as provider keys removed), then the config's `env` over it.
- `guards()`: the pre-exec function (parent-death signal) and the reaper's watch and
  forget for the server's process group, so it dies with the daemon even on SIGKILL.

These are the same functions `execute` uses (`elelem_daemon.base.keys`,
`elelem_daemon.processes.procs`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..base import keys
from ..processes import procs
from .config import ServerConfig

Hook = Callable[[int], None]


def lookup() -> Mapping[str, str]:
    """What `${VAR}` expands from: the environment with the keys the daemon took."""
    return keys.environ()


def tool_env() -> dict[str, str]:
    return dict(keys.tool_env())


def server_env(config: ServerConfig) -> dict[str, str]:
    return {**tool_env(), **dict(config.env)}


def guards() -> tuple[Callable[[], None] | None, Hook, Hook]:
    """(pre_exec, watch(pgid), forget(pgid)) as `execute` has them."""
    keys.guard()
    procs.reaper.start()
    return procs.tool_preexec(), procs.reaper.watch, procs.reaper.forget
