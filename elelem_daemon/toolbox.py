"""Toolbox: the tools the model can call, plus before and after hooks.

`run` follows the product document step by step: resolve, validate, before hooks,
handler, after hooks, wrap, and turn any exception into a failure.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .result import Result
from .tool import FINE, Handler, NullTool, Tool

log = logging.getLogger(__name__)
Hook = Callable[..., Any]
ALL = "*"


async def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    value = fn(*args, **kwargs)
    return await value if inspect.isawaitable(value) else value


class Toolbox:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._aliases: dict[str, str] = {}
        self._before: dict[str, list[Hook]] = {}
        self._after: dict[str, list[Hook]] = {}

    # -- registration -------------------------------------------------------
    def add(
        self,
        name: str,
        description: str = "",
        params: dict[str, Any] | None = None,
        required: Iterable[str] = (),
        aliases: Iterable[str] = (),
        handler: Handler | None = None,
        kind: str = "other",
        fine: Iterable[int] = FINE,
    ) -> Any:
        """Add a tool; without a handler, returns a decorator taking the handler."""
        if handler is None:

            def decorate(fn: Handler) -> Handler:
                self.add(name, description, params, required, aliases, fn, kind, fine)
                return fn

            return decorate
        tool = Tool(name, description, params, required, aliases, handler, kind, fine)
        self.register(tool)
        return tool

    def register(self, tool: Tool) -> Tool:
        self._tools[tool.name] = tool
        for alias in tool.aliases:
            self._aliases[alias] = tool.name
        return tool

    def remove(self, name: str) -> Tool | None:
        """Take a tool (and its aliases) out; its hooks stay. None if there was none."""
        tool = self._tools.pop(name, None)
        if tool is not None:
            for alias in [a for a, target in self._aliases.items() if target == name]:
                del self._aliases[alias]
        return tool

    def before(self, fn: Hook | None = None, tool: str = ALL) -> Any:
        return self._hook(self._before, fn, tool)

    def after(self, fn: Hook | None = None, tool: str = ALL) -> Any:
        return self._hook(self._after, fn, tool)

    def _hook(self, hooks: dict[str, list[Hook]], fn: Hook | None, tool: str) -> Any:
        if fn is None:
            return lambda f: self._hook(hooks, f, tool)
        hooks.setdefault(tool, []).append(fn)
        return fn

    def subset(self, keep: Callable[[Tool], bool]) -> Toolbox:
        """A toolbox of the tools `keep` accepts, with the same hooks (shared, so the
        permission policy sees their calls too): a sub-agent's (builtins/task.py)."""
        other = Toolbox()
        for tool in self._tools.values():
            if keep(tool):
                other.register(tool)
        other._before, other._after = self._before, self._after
        return other

    def clear(self) -> None:
        for table in (self._tools, self._aliases, self._before, self._after):
            table.clear()

    # -- lookup -------------------------------------------------------------
    def resolve(self, name: str) -> Tool:
        name = self._aliases.get(name, name)
        return self._tools.get(name) or NullTool(name, self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def definitions(self, allowed: Callable[[Tool], bool] | None = None) -> list[dict[str, Any]]:
        """The tools as the provider is offered them; with `allowed`, only those it lets
        through (a session's mode)."""
        tools = self._tools.values()
        return [tool.definition() for tool in tools if allowed is None or allowed(tool)]

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: str) -> bool:
        return self._aliases.get(name, name) in self._tools

    # -- running ------------------------------------------------------------
    async def run(self, name: str, args: dict[str, Any]) -> Result:
        tool = self.resolve(name)
        try:
            problems = tool.validate(args)
        except Exception as exc:  # a broken schema (a plugin's) is the call's failure
            return Result.failure(f"cannot check the arguments of {tool.name}: {exc}")
        if problems:
            return Result.failure(", ".join(problems))
        try:
            for hook in self._before.get(ALL, []):
                await _call(hook, args, tool_name=tool.name)
            for hook in self._before.get(tool.name, []):
                await _call(hook, args)
            value = await self._handle(tool, args)
            for hook in self._after.get(ALL, []):
                await _call(hook, args, value, tool_name=tool.name)
            for hook in self._after.get(tool.name, []):
                await _call(hook, args, value)
        except Exception as exc:  # a failing tool is data for the model, never a crash
            log.warning(
                "tool %s failed: %s", tool.name, exc, exc_info=log.isEnabledFor(logging.DEBUG)
            )
            return Result.failure(str(exc), name=tool.name, args=args)
        return Result.wrap(value, tool.fine)

    @staticmethod
    async def _handle(tool: Tool, args: dict[str, Any]) -> Any:
        assert tool.handler is not None
        if inspect.iscoroutinefunction(tool.handler):
            return await tool.handler(args)
        return await asyncio.to_thread(tool.handler, args)
