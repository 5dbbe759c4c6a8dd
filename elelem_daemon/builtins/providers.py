"""Built-in providers. Each is imported only when it is chosen (httpx included)."""

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
    plugin.provider("anthropic", lazy("elelem_daemon.providers.anthropic", "AnthropicProvider"))
    plugin.provider("openai", lazy("elelem_daemon.providers.openai", "OpenAIProvider"))
    plugin.provider("ollama", lazy("elelem_daemon.providers.ollama", "OllamaProvider"))
