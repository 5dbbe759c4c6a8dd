"""elelem-daemon: elelem's agent loop, for terminals and editors.

The names here are the public surface for plugin authors; see docs/plugins.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "Commands",
    "Conversation",
    "ElelemError",
    "Input",
    "NullInput",
    "NullOutput",
    "Output",
    "Plugin",
    "ProviderError",
    "Registry",
    "Result",
    "Session",
    "Tool",
    "Toolbox",
    "Transcript",
    "__version__",
]

_WHERE = {
    "Agent": "agent",
    "Commands": "commands",
    "Conversation": "conversation",
    "ElelemError": "errors",
    "Input": "io",
    "NullInput": "io",
    "NullOutput": "io",
    "Output": "io",
    "Plugin": "registry",
    "ProviderError": "errors",
    "Registry": "registry",
    "Result": "result",
    "Session": "session",
    "Tool": "tool",
    "Toolbox": "toolbox",
    "Transcript": "transcript",
}

if TYPE_CHECKING:
    from .agent import Agent
    from .commands import Commands
    from .conversation import Conversation
    from .errors import ElelemError, ProviderError
    from .io import Input, NullInput, NullOutput, Output
    from .registry import Plugin, Registry
    from .result import Result
    from .session import Session
    from .tool import Tool
    from .toolbox import Toolbox
    from .transcript import Transcript


def __getattr__(name: str) -> Any:
    """Import on first use: `import elelem_daemon` stays cheap for the daemon's start-up."""
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
