"""ToolSet: what one server offers the session, as elelem tools and slash commands.

Each listed tool becomes an `McpTool` named by names.py, whose schema is the server's
`inputSchema` as listed (passed through to providers), checked by schema.py before it
is offered and used for local validation without regular expressions. A tool whose
schema is refused is left out, with the reason among the set's `problems`.
`permission = "ask"`: the permission policy asks before an MCP tool runs unless a rule
names it (builtins/permissions.py reads this attribute).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..tool import Tool
from . import budget, names, schema

MAX_DESCRIPTION = 10_000
MAX_TOOLS = 500
MAX_PROMPTS = 500


class McpTool(Tool):
    """A server's tool: its own schema, validated safely; asks before it runs."""

    permission = "ask"

    def __init__(
        self, name: str, server: str, remote: str, description: str, input_schema: dict[str, Any]
    ) -> None:
        properties = input_schema.get("properties")
        params = {
            key: value
            for key, value in (properties if isinstance(properties, dict) else {}).items()
            if isinstance(key, str) and isinstance(value, dict)
        }
        required = input_schema.get("required")
        required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        super().__init__(name, description, params, required)
        self.server = server
        self.remote = remote  # the tool's name on its server
        self.input_schema = input_schema
        self._checker = schema.Checker(input_schema)
        self.size = budget.size(name, description, input_schema)  # bytes, for budget.py

    @property
    def schema(self) -> dict[str, Any]:
        if "type" in self.input_schema:
            return self.input_schema
        return {"type": "object", **self.input_schema}

    def validate(self, args: Any) -> list[str]:
        return self._checker.validate(args)


@dataclass
class Prompt:
    command: str  # without the slash: `github:review`
    remote: str
    description: str
    arguments: list[tuple[str, bool, str]]  # (name, required, description)

    def usage(self) -> str:
        words = [name.upper() if need else f"[{name.upper()}]" for name, need, _ in self.arguments]
        return " ".join([f"/{self.command}", *words])


@dataclass
class ToolSet:
    tools: list[McpTool] = field(default_factory=list)
    prompts: list[Prompt] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _text(value: Any, cap: int = MAX_DESCRIPTION) -> str:
    text = value if isinstance(value, str) else ""
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _get(item: Any, key: str, default: Any = None) -> Any:
    return item.get(key, default) if isinstance(item, dict) else getattr(item, key, default)


def build(
    server: str,
    prefix: str,
    tools: Iterable[Any],
    prompts: Iterable[Any],
    taken: Iterable[str] = (),
) -> ToolSet:
    """The set for a server's listings (SDK objects or dicts); CPU only, thread-safe."""
    found = ToolSet()
    listed = {}
    for item in list(tools)[:MAX_TOOLS]:
        remote = _get(item, "name")
        if not isinstance(remote, str) or not remote:
            found.problems.append("a tool without a name is left out")
            continue
        listed[remote] = item
    named = names.tool_names(prefix, listed, taken)
    for remote, item in listed.items():
        input_schema = _get(item, "input_schema") or _get(item, "inputSchema")
        if (why := schema.problem(input_schema)) is not None:
            found.problems.append(f"tool {remote} is left out: {why}")
            continue
        description = _text(_get(item, "description")) or _text(_get(item, "title"))
        tool = McpTool(named[remote], server, remote, description, input_schema)
        found.tools.append(tool)
    prompt_list = {}
    for item in list(prompts)[:MAX_PROMPTS]:
        remote = _get(item, "name")
        if isinstance(remote, str) and remote:
            prompt_list[remote] = item
    commands = names.prompt_names(prefix, prompt_list)
    for remote, item in prompt_list.items():
        arguments = []
        for argument in _get(item, "arguments") or []:
            name = _get(argument, "name")
            if isinstance(name, str) and name:
                need = bool(_get(argument, "required"))
                arguments.append((name, need, _text(_get(argument, "description"), 200)))
        description = _text(_get(item, "description"), 200) or f"MCP prompt of {server}"
        found.prompts.append(Prompt(commands[remote], remote, description, arguments))
    return found


def prompt_arguments(prompt: Prompt, text: str | None) -> tuple[dict[str, str], str | None]:
    """`/server:prompt` arguments: `NAME=value` words, or values in declared order
    (shell quoting allowed; the last declared argument takes the rest of the line).
    Returns (arguments, problem)."""
    import shlex

    words: list[str] = []
    if text:
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
    declared = [name for name, _, _ in prompt.arguments]
    values: dict[str, str] = {}
    positional = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in declared:
            values[key] = value
        else:
            positional.append(word)
    free = [name for name in declared if name not in values]
    for index, name in enumerate(free):
        if index >= len(positional):
            break
        last = index == len(free) - 1
        values[name] = " ".join(positional[index:]) if last else positional[index]
    if len(positional) > len(free) and not free:
        return values, f"too many arguments; usage: {prompt.usage()}"
    missing = [name for name, need, _ in prompt.arguments if need and name not in values]
    if missing:
        return values, f"missing {', '.join(missing)}; usage: {prompt.usage()}"
    return values, None
