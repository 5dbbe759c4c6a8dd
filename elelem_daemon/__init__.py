"""elelem-daemon: elelem's agent loop, for terminals and editors.

The names here are the public surface for plugin authors; see docs/plugins.md. Each
is imported on first use, from the layer that defines it (docs/architecture.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "CommandResult",
    "Commands",
    "Conversation",
    "ElelemError",
    "Input",
    "NullInput",
    "NullOutput",
    "Output",
    "Plugin",
    "Provider",
    "ProviderError",
    "Registry",
    "Result",
    "Session",
    "SessionView",
    "TerminalInput",
    "TerminalOutput",
    "Tool",
    "Toolbox",
    "Transcript",
    "TurnResult",
    "__version__",
]

_WHERE = {
    "Agent": "agent",
    "CommandResult": "session",
    "Commands": "commands",
    "Conversation": "conversation",
    "ElelemError": "base.errors",
    "Input": "io",
    "NullInput": "io",
    "NullOutput": "io",
    "Output": "io",
    "Plugin": "registry",
    "Provider": "ports",
    "ProviderError": "base.errors",
    "Registry": "registry",
    "Result": "result",
    "Session": "session",
    "SessionView": "ports",
    "TerminalInput": "faces.terminal.console",
    "TerminalOutput": "faces.terminal.console",
    "Tool": "tool",
    "Toolbox": "toolbox",
    "Transcript": "transcript",
    "TurnResult": "agent",
}

if TYPE_CHECKING:
    from .agent import Agent, TurnResult
    from .base.errors import ElelemError, ProviderError
    from .commands import Commands
    from .conversation import Conversation
    from .faces.terminal.console import TerminalInput, TerminalOutput
    from .io import Input, NullInput, NullOutput, Output
    from .ports import Provider, SessionView
    from .registry import Plugin, Registry
    from .result import Result
    from .session import CommandResult, Session
    from .tool import Tool
    from .toolbox import Toolbox
    from .transcript import Transcript


def __getattr__(name: str) -> Any:
    """Import on first use: `import elelem_daemon` stays cheap for the daemon's start-up."""
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
