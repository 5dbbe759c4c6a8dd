"""PrefixWatch: says, once, what changed in the prompt's stable prefix.

Every provider reuses a prompt prefix that is byte-identical to the last request's
(Anthropic's and OpenAI's prompt caches, llama.cpp's and Ollama's KV cache). The
prefix is the system prompt's parts and the tool list; the transcript keeps them
stable for a session (transcript.py). When the user changes one of them (AGENTS.md,
the mode, the tools, MCP servers) the cache is lost from there: `check` logs that
once, naming what changed, and counts it in `breaks`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import Any

log = logging.getLogger(__name__)


def _digest(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class PrefixWatch:
    def __init__(self) -> None:
        self.parts: dict[str, str] | None = None
        self.tools: list[tuple[str, str]] | None = None
        self.breaks: list[str] = []  # what broke the cache, one line per change

    def check(self, parts: Sequence[tuple[str, str]], tools: Sequence[dict[str, Any]]) -> str:
        """Compare this request's prefix with the last one's; the change said (and
        logged), or "" when the prefix is the same (or this is the first request)."""
        now_parts = {name: _digest(text) for name, text in parts}
        now_tools = [(_name(tool), _digest(tool)) for tool in tools]
        before_parts, before_tools = self.parts, self.tools
        self.parts, self.tools = now_parts, now_tools
        if before_parts is None or before_tools is None:
            return ""
        said = [
            f"the system prompt's {name}"
            for name in dict.fromkeys([*before_parts, *now_parts])
            if before_parts.get(name) != now_parts.get(name)
        ]
        if before_tools != now_tools:
            said.append(_tools_change(before_tools, now_tools))
        if not said:
            return ""
        line = f"prompt cache: {'; '.join(said)} changed: the model re-reads the prompt from there"
        log.info("%s", line)
        self.breaks.append(line)
        return line


def _name(tool: dict[str, Any]) -> str:
    function = tool.get("function", tool)
    return str(function.get("name", "?")) if isinstance(function, dict) else "?"


def _tools_change(before: list[tuple[str, str]], now: list[tuple[str, str]]) -> str:
    old, new = dict(before), dict(now)
    added = [name for name in new if name not in old]
    gone = [name for name in old if name not in new]
    edited = [name for name in new if name in old and old[name] != new[name]]
    words = [
        f"{what} {', '.join(names[:5])}{' …' if len(names) > 5 else ''}"
        for what, names in (("added", added), ("removed", gone), ("changed", edited))
        if names
    ]
    return f"the tools ({'; '.join(words) or 'their order'})"
