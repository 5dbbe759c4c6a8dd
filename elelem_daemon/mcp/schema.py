"""A server's `inputSchema`, checked before its tool is offered and used safely after.

A schema comes from a process or a URL we do not control, so:
- `problem(schema)` refuses one that is not an object schema, is larger than
  MAX_CHARS of JSON or deeper than MAX_DEPTH, or is not valid JSON Schema (its
  `$schema` draft, else 2020-12); the tool is then left out and the reason shown;
- `Checker` validates a call's arguments locally with jsonschema only (fastjsonschema
  compiles schemas to Python code: not for schemas from elsewhere), with an empty
  reference registry (a `$ref` to a URL is never fetched), and without the regular
  expressions of `pattern` and `patternProperties` (Python's `re` has no time limit,
  and a crafted pattern freezes the event loop). Local validation is a convenience
  for the model, never the last word: the server validates too, so where the local
  check cannot decide (an unresolvable `$ref`, a broken keyword), the call goes on.
"""

from __future__ import annotations

import json
import logging
from itertools import islice
from typing import Any

log = logging.getLogger(__name__)

MAX_CHARS = 100_000
MAX_DEPTH = 32
MAX_MESSAGES = 10
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_ONE = (
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
)


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a JSON value, counting up to limit + 1 (no recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        deepest = max(deepest, level)
        if level > limit:
            return level
        if isinstance(item, dict):
            todo.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            todo.extend((child, level + 1) for child in item)
    return deepest


def problem(schema: Any) -> str | None:
    """Why this inputSchema cannot be offered, or None."""
    if not isinstance(schema, dict):
        return "its inputSchema is not a JSON object"
    if depth(schema) > MAX_DEPTH:
        return f"its inputSchema is nested deeper than {MAX_DEPTH} levels"
    try:
        size = len(json.dumps(schema, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError) as exc:
        return f"its inputSchema is not JSON ({exc})"
    if size > MAX_CHARS:
        return f"its inputSchema is {size} characters of JSON (at most {MAX_CHARS})"
    kind = schema.get("type", "object")
    if kind != "object":
        return f'its inputSchema has type {json.dumps(kind)}, not "object"'
    from jsonschema import Draft202012Validator, SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        return f"its inputSchema is not valid JSON Schema: {exc.message}"
    except Exception as exc:  # a metaschema lookup that fails, ...
        return f"its inputSchema cannot be checked: {exc}"
    return None


def local(schema: Any) -> Any:
    """A copy of the schema without regular expressions (see the module docstring).

    Where `patternProperties` goes, `additionalProperties` beside it goes too, so no
    property the patterns would have allowed is refused."""
    if isinstance(schema, list):
        return [local(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("pattern", "patternProperties"):
            continue
        if key == "additionalProperties" and "patternProperties" in schema:
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: local(sub) for name, sub in value.items()}
        elif key in SCHEMA_LISTS and isinstance(value, list):
            out[key] = [local(sub) for sub in value]
        elif key in SCHEMA_ONE:
            out[key] = local(value)
        else:
            out[key] = value
    return out


class Checker:
    """Validates arguments against a (checked) inputSchema; messages as `Tool.validate`."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator: Any = None

    def validate(self, args: Any) -> list[str]:
        from ..tool import _messages

        try:
            if self._validator is None:
                from jsonschema import Draft202012Validator
                from jsonschema.validators import validator_for
                from referencing import Registry

                kind = validator_for(self.schema, default=Draft202012Validator)
                self._validator = kind(local(self.schema), registry=Registry())
            messages: list[str] = []
            for error in islice(self._validator.iter_errors(args), MAX_MESSAGES):
                messages.extend(m for m in _messages(error) if m not in messages)
            return messages
        except Exception as exc:  # the server's own validation decides
            log.info("mcp: arguments not checked locally: %s", exc)
            return []
