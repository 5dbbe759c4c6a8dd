"""Tool: a name, a JSON Schema for its arguments, aliases, a kind and a handler.

`kind` says what the tool does, in the Agent Client Protocol's words (KINDS), so an
editor can show it (an icon, a grouping); `other` when nothing fits.

Validation messages read like Ruby's json_schemer, as elelem words them:
`object at root is missing required properties: path`.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable, Iterable
from typing import Any

Handler = Callable[[dict[str, Any]], Any]
Check = Callable[[Any], bool]

FINE = (0,)  # a command's exit statuses that are a success, unless the tool says more

# Keywords of JSON Schema 2019-09 / 2020-12 that fastjsonschema (draft 7) would ignore.
NEWER_KEYWORDS = (
    "prefixItems",
    "unevaluated",
    "dependentRequired",
    "dependentSchemas",
    "minContains",
    "maxContains",
    "$dynamic",
    "$recursive",
)

# The tool call running now, `{id, name, arguments}` (set by Agent.run): what a tool
# that runs other work in its name (builtins/task.py) nests that work under.
CURRENT_CALL: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "elelem_current_call", default=None
)
KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other")

TYPE_NAMES = {
    "string": "a string",
    "boolean": "a boolean",
    "number": "a number",
    "integer": "an integer",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def _where(path: Iterable[Any]) -> str:
    parts = list(path)
    return "`/" + "/".join(str(p) for p in parts) + "`" if parts else "root"


def _messages(error: Any) -> list[str]:
    """One jsonschema ValidationError as json_schemer-style messages."""
    at = _where(error.absolute_path)
    kind, expected = error.validator, error.validator_value
    if kind == "required":
        missing = [name for name in expected if name not in (error.instance or {})]
        return [f"object at {at} is missing required properties: {', '.join(missing)}"]
    if kind == "type":
        names = [expected] if isinstance(expected, str) else expected
        return [f"value at {at} is not {' or '.join(TYPE_NAMES.get(t, t) for t in names)}"]
    if kind == "enum":
        return [f"value at {at} is not one of: {json.dumps(expected)}"]
    if kind == "additionalProperties":
        allowed = error.schema.get("properties", {})
        extras = [key for key in error.instance if key not in allowed]
        prefix = list(error.absolute_path)
        return [
            f"object property at {_where([*prefix, key])} is a disallowed additional property"
            for key in extras
        ]
    words = {
        "minLength": "string length at {at} is less than: {v}",
        "maxLength": "string length at {at} is greater than: {v}",
        "minimum": "number at {at} is less than: {v}",
        "maximum": "number at {at} is greater than: {v}",
        "pattern": "string at {at} does not match pattern: {v}",
    }
    if kind in words:
        return [words[kind].format(at=at, v=expected)]
    return [f"value at {at} does not match schema: {error.message}"]


class Tool:
    def __init__(
        self,
        name: str,
        description: str = "",
        params: dict[str, Any] | None = None,
        required: Iterable[str] = (),
        aliases: Iterable[str] = (),
        handler: Handler | None = None,
        kind: str = "other",
        fine: Iterable[int] = FINE,
    ) -> None:
        self.name = name
        self.kind = checked_kind(kind)
        self.fine = tuple(fine)  # the exit statuses that are not a failure (result.py)
        self.description = description
        self.params = dict(params or {})
        self.required = list(required)
        self.aliases = list(aliases)
        self.handler = handler
        self._validator: Any = None
        self._valid: Check | None = None

    @property
    def shown_aliases(self) -> list[str]:
        """The aliases a model may use, as a person reads them: without the forms with
        a chat-template token (`write<|channel|>`, which some models emit by mistake);
        those still resolve, they are only not shown."""
        return [alias for alias in self.aliases if "<|" not in alias]

    @property
    def schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": self.params, "required": self.required}

    def definition(self) -> dict[str, Any]:
        """The tool as an OpenAI-style function definition, as providers receive it."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.schema,
            },
        }

    def validate(self, args: Any) -> list[str]:
        """The json_schemer-style messages for args; empty when they are valid.

        A compiled check (~2 µs) answers "valid" first; only arguments it rejects go
        through jsonschema (~45 µs), whose messages are the answer.
        """
        if self._validator is None:
            from jsonschema import Draft202012Validator  # deferred: start-up time

            self._validator = Draft202012Validator(self.schema)
            self._valid = _compiled(self.schema)
        if self._valid is not None and self._valid(args):
            return []
        messages: list[str] = []
        for error in self._validator.iter_errors(args):
            messages.extend(m for m in _messages(error) if m not in messages)
        return messages


def checked_kind(kind: str) -> str:
    """`kind` if it is one of KINDS; a ValueError naming them otherwise."""
    if kind not in KINDS:
        raise ValueError(f"unknown tool kind: {kind!r}. Kinds: {', '.join(KINDS)}")
    return kind


def _compiled(schema: dict[str, Any]) -> Check | None:
    """fastjsonschema's check for a schema it reads as jsonschema does, else None.

    It is only trusted to say "valid": where it is stricter (formats), jsonschema has
    the last word; schemas using newer keywords it would ignore are not compiled.
    """
    text = json.dumps(schema, default=str)
    if any(word in text for word in NEWER_KEYWORDS):
        return None
    try:
        import fastjsonschema  # deferred: start-up time

        check = fastjsonschema.compile(schema)
    except Exception:  # a schema it cannot compile is left to jsonschema
        return None

    def valid(args: Any) -> bool:
        try:
            check(args)
        except Exception:
            return False
        return True

    return valid


class NullTool(Tool):
    """Stands in for a name no tool answers to; it fails validation, naming the real ones."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        super().__init__(f"{name}?")
        self.asked = name
        self.available = list(available)

    def validate(self, args: Any) -> list[str]:
        return [f'unknown tool: "{self.asked}". Available: {", ".join(self.available)}.']
