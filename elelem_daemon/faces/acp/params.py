"""A request's params, checked: each field of the right type (else invalid params),
and the client's additional workspace roots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...jsonrpc.errors import invalid_params


def field(params: dict[str, Any], name: str, kind: type, required: bool = True) -> Any:
    """params[name] when it has the right type; an invalid-params error otherwise."""
    value = params.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = {str: "a string", int: "an integer", list: "an array", dict: "an object"}
        what = "missing" if value is None else f"not {expected.get(kind, kind.__name__)}"
        raise invalid_params(f"{name}: {what}", errors=[{"field": name, "expected": kind.__name__}])
    return value


MAX_ROOTS = 64  # additional workspace roots a session keeps
MAX_ROOT = 4096  # characters of one root's path


def additional_directories(params: dict[str, Any]) -> list[str]:
    """The client's additional workspace roots (ACP 1.21 `additionalDirectories`):
    absolute paths, at most MAX_ROOTS, each once; else invalid params. They are kept
    and listed, and widen nothing (docs/acp.md, "Additional workspace roots")."""
    roots = field(params, "additionalDirectories", list, required=False) or []
    if len(roots) > MAX_ROOTS:
        raise invalid_params(f"additionalDirectories: more than {MAX_ROOTS} roots")
    kept: list[str] = []
    for index, root in enumerate(roots):
        if not isinstance(root, str) or not root or len(root) > MAX_ROOT or "\0" in root:
            raise invalid_params(f"additionalDirectories[{index}]: not a path")
        if not Path(root).is_absolute():
            raise invalid_params(f"additionalDirectories[{index}]: must be absolute: {root}")
        if root not in kept:
            kept.append(root)
    return kept
