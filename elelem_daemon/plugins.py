"""Plugins: where they come from and how they load.

Sources, in order: the built-in plugins, installed packages (entry-point group
`elelem.plugins`), then `*.py` files in `~/.agents/plugins/` and the project's
`.agents/plugins/`, each folder in sorted filename order. A plugin file defines
`register(plugin)`. A plugin that fails to load is reported and the rest still load.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .log import notice
from .registry import Origin, Registry

log = logging.getLogger(__name__)

BUILTINS = (
    "elelem_daemon.builtins.providers",
    "elelem_daemon.builtins.files",
    "elelem_daemon.builtins.shell",
    "elelem_daemon.builtins.search",
    "elelem_daemon.builtins.interview",
    "elelem_daemon.builtins.task",
    "elelem_daemon.builtins.todo",
    "elelem_daemon.builtins.commands",
    "elelem_daemon.builtins.steer",
    "elelem_daemon.builtins.shell_session",
    "elelem_daemon.builtins.modes",  # before the permission policy: a refused call asks nothing
    "elelem_daemon.builtins.init",
    "elelem_daemon.builtins.permissions",
    "elelem_daemon.builtins.checkpoints",  # after the permission policy: a denied call takes none
    "elelem_daemon.builtins.mcp",
)
ENTRY_POINT_GROUP = "elelem.plugins"


def warn(path: str, error: BaseException) -> None:
    """The one line a broken plugin costs: on stderr, never stdout."""
    notice(f"elelem: failed to load plugin {path}: {error}")


def _guarded(
    registry: Registry, name: str, source: str, path: str, load: Callable[[], Any]
) -> None:
    """Load one plugin and call its register(plugin); a failure is warned, not raised."""
    origin: Origin | None = None
    try:
        target = load()
        register = target if callable(target) else getattr(target, "register", None)
        if register is None:
            raise TypeError("a plugin needs a register(plugin) function")
        plugin = registry.plugin(name, source, path)
        origin = plugin.origin
        register(plugin)
    except Exception as exc:  # one broken plugin must not stop the others
        error = f"{type(exc).__name__}: {exc}"
        if origin is None:
            registry.origins.append(Origin(name, source, path, error=error))
        else:
            origin.error = error
        warn(path, exc)


def load_builtins(registry: Registry) -> Registry:
    for module in BUILTINS:
        _guarded(
            registry,
            module.rsplit(".", 1)[-1],
            "builtin",
            module,
            functools.partial(importlib.import_module, module),
        )
    return registry


def load_entry_points(registry: Registry) -> Registry:
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        _guarded(registry, point.name, "entry-point", point.value, point.load)
    return registry


def load_folder(registry: Registry, folder: Path, source: str) -> Registry:
    if not folder.is_dir():
        return registry
    for path in sorted(folder.glob("*.py")):
        _guarded(registry, path.stem, source, str(path), functools.partial(_exec_file, path))
    return registry


def _exec_file(path: Path) -> Any:
    """Run a plugin file afresh (so /reload sees edits) as its own module."""
    spec = importlib.util.spec_from_file_location(f"elelem_plugin_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def user_folder() -> Path:
    return Path.home() / ".agents" / "plugins"


def core_registry(entry_points: bool = True) -> Registry:
    """The built-ins and installed packages: loaded once per process."""
    registry = load_builtins(Registry())
    return load_entry_points(registry) if entry_points else registry


def project_registry(core: Registry, cwd: Path, project: bool = True) -> Registry:
    """A child of core with the user's plugin files and, if allowed, the project's."""
    registry = load_folder(core.child(), user_folder(), "user")
    if project:
        project_folder = (Path(cwd) / ".agents" / "plugins").resolve()
        if project_folder != user_folder().resolve():
            load_folder(registry, project_folder, "project")
    return registry


def origins(registry: Registry) -> list[dict[str, Any]]:
    """Which plugins a registry (a session's) loaded and where each came from; a plugin
    that failed to load has its `error`."""
    return [
        {"name": o.name, "source": o.source, "path": o.path, "error": o.error}
        for o in registry.all_origins()
    ]
