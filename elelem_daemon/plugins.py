"""Plugins: where they come from and how they load.

Sources, in order: the built-in plugins, installed packages (entry-point group
`elelem.plugins`), then `*.py` files in `~/.agents/plugins/` and the project's
`.agents/plugins/`, each folder in sorted filename order. A plugin file defines
`register(plugin)`. A plugin that fails to load is reported and the rest still load.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import regular
from .base.log import notice
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
    "elelem_daemon.builtins.skills",
    "elelem_daemon.builtins.init",
    "elelem_daemon.builtins.permissions",
    "elelem_daemon.builtins.checkpoints",  # after the permission policy: a denied call takes none
    "elelem_daemon.builtins.mcp",
)
ENTRY_POINT_GROUP = "elelem.plugins"
MAX_ENTRY_POINTS = 1 << 20  # bytes of an entry_points.txt the pre-scan reads
MAX_PLUGIN_BYTES = 4 << 20  # of a plugin file


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
    if not may_declare_plugins():
        return registry  # importlib.metadata would find none: its import is spared
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        _guarded(registry, point.name, "entry-point", point.value, point.load)
    return registry


def may_declare_plugins(path: list[str] | None = None) -> bool:
    """Whether an installed package may declare an `elelem.plugins` entry point: False
    only when none can, so the scan (importlib.metadata's import, ~50 ms, and its walk
    of every distribution) is skipped. It looks where importlib.metadata's own finder
    looks (each `sys.path` folder's `*.dist-info` and `*.egg-info`, an `.egg`'s
    `EGG-INFO`) for an `entry_points.txt` naming the group. Anything it cannot rule out
    says True: a `sys.path` entry that is a file (a zip), an unreadable folder or file,
    a meta-path finder of distributions other than the standard one."""
    import importlib.machinery
    import sys

    for finder in sys.meta_path:
        if finder is not importlib.machinery.PathFinder and hasattr(finder, "find_distributions"):
            return True
    for entry in sys.path if path is None else path:
        if not isinstance(entry, str):
            return True
        if _may_declare_in(entry or "."):
            return True
    return False


def _may_declare_in(root: str) -> bool:
    import os

    try:
        if not os.path.isdir(root):
            return os.path.exists(root)  # a zip (or anything else) is importlib's to read
        children = os.listdir(root)
    except OSError:
        return True
    egg = os.path.basename(root).lower().endswith(".egg")
    for child in children:
        low = child.lower()
        if low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info"):
            points = os.path.join(root, child, "entry_points.txt")
            try:
                text = regular.read(points, MAX_ENTRY_POINTS + 1)
                if len(text) > MAX_ENTRY_POINTS or ENTRY_POINT_GROUP.encode() in text:
                    return True  # named (or too long to rule out)
            except (FileNotFoundError, NotADirectoryError):
                continue  # importlib.metadata reads no entry point there either
            except OSError:
                return True
    return False


def load_folder(registry: Registry, folder: Path, source: str) -> Registry:
    """Every `*.py` of the folder. The user's (`source` "user") load only as the user
    approved them (safety/vetted.py): a new or changed file is held, and what runs is
    the very bytes that were checked."""
    if not folder.is_dir():
        return registry
    if source == "user":
        from .safety import vetted

        record = vetted.load()
    for path in sorted(folder.glob("*.py")):
        if source != "user":
            _guarded(registry, path.stem, source, str(path), functools.partial(_exec_file, path))
            continue
        data = vetted.read_if_approved(path, record)
        if data is not None:
            load = functools.partial(_exec_file, path, data)
            _guarded(registry, path.stem, source, str(path), load)
    return registry


class PluginSource(importlib.machinery.SourceFileLoader):
    """importlib's loader of a source file, reading it with the bounded, non-blocking
    reader (base/regular.py): a FIFO named `x.py` in a plugins folder is a load error,
    never a wait; a file past MAX_PLUGIN_BYTES is not run."""

    def get_data(self, path: str) -> bytes:
        data = regular.read(path, MAX_PLUGIN_BYTES + 1)
        if len(data) > MAX_PLUGIN_BYTES:
            raise ImportError(f"{path}: larger than {MAX_PLUGIN_BYTES} bytes")
        return data


def _exec_file(path: Path, data: bytes | None = None) -> Any:
    """Run a plugin file afresh (so /reload sees edits) as its own module; with `data`,
    those bytes (the ones checked: safety/vetted.py) rather than the file read again."""
    name = f"elelem_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path, loader=PluginSource(name, str(path)))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    if data is None:
        spec.loader.exec_module(module)
    else:
        exec(compile(data, str(path), "exec"), module.__dict__)
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
