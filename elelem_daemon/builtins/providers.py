"""Built-in providers. Each is imported only when it is chosen."""

from __future__ import annotations

import importlib
from typing import Any

from ..registry import Plugin


def lazy(module: str, cls: str) -> Any:
    """A factory that imports its provider module on the first build."""

    def factory(model: str | None = None) -> Any:
        return getattr(importlib.import_module(module), cls)(model=model)

    return factory


def register(plugin: Plugin) -> None:
    plugin.provider("stub", lazy("elelem_daemon.providers.stub", "StubProvider"))
