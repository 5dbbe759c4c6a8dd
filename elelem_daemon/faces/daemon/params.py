"""Params: what each daemon request takes, and the check that answers bad params.

Each spec maps a field to its type and whether it is required. `check` lists every
problem at once (`data.errors` of the `invalid_params` error). Unknown fields are
ignored, so newer clients work with older daemons; `null` counts as absent for an
optional field. Plain checks, not JSON Schema: the daemon's start-up stays light.
"""

from __future__ import annotations

from typing import Any

from ...base.errors import InvalidParams

Spec = dict[str, tuple[str, bool]]

TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "servers": (list, dict),  # mcpServers: ACP's list, or the files' map
}
JSON_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    dict: "an object",
    list: "an array",
    type(None): "null",
}

SESSION: Spec = {"sessionId": ("string", True)}
INITIALIZE: Spec = {
    "processId": ("integer", False),
    "clientInfo": ("object", False),
    "capabilities": ("object", False),
}
NEW: Spec = {
    "cwd": ("string", False),
    "provider": ("string", False),
    "model": ("string", False),
    "trusted": ("boolean", False),
    "mcpServers": ("servers", False),
}
TURN: Spec = {**SESSION, "text": ("string", True), "attachments": ("array", False)}
COMMAND: Spec = {**SESSION, "line": ("string", True)}
STEER: Spec = {**SESSION, "text": ("string", True)}
EDIT_CONTEXT: Spec = {
    **SESSION,
    "delete": ("array", False),
    "index": ("integer", False),
    "content": ("string", False),
}
SET_MODE: Spec = {**SESSION, "modeId": ("string", True)}
COMPLETE: Spec = {**SESSION, "text": ("string", True)}
LIST: Spec = {"cwd": ("string", False)}
HISTORY: Spec = {**SESSION, "cursor": ("string", True)}
LOAD: Spec = {
    **SESSION,
    "provider": ("string", False),
    "model": ("string", False),
    "trusted": ("boolean", False),
    "mcpServers": ("servers", False),
}
REWIND: Spec = {
    **SESSION,
    "turnId": ("integer", True),
    "files": ("boolean", False),
    "conversation": ("boolean", False),
    "dryRun": ("boolean", False),
    "force": ("boolean", False),
    "confirm": ("array", False),
}
EDITOR_STATE: Spec = {"sessionId": ("string", False)}  # the rest: context/editor_state.py
MAX_COALESCE_MS = 1000  # the slowest render rate a client may ask for (events.coalesceMs)


def check(params: Any, spec: Spec) -> dict[str, Any]:
    """The params as a dict without nulls, or InvalidParams naming every problem."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams(
            f"params must be an object, not {_name(params)}",
            errors=[f"params: expected an object, got {_name(params)}"],
        )
    errors = []
    for field, (kind, required) in spec.items():
        value = params.get(field)
        if value is None:
            if required:
                errors.append(f"{field}: required")
        elif not _is(value, kind):
            expected = " or ".join(_name(t()) for t in TYPES[kind])
            errors.append(f"{field}: expected {expected}, got {_name(value)}")
    if errors:
        raise InvalidParams("invalid params: " + "; ".join(errors), errors=errors)
    return {key: value for key, value in params.items() if value is not None}


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind != "boolean":
        return False  # JSON true is not an integer
    return isinstance(value, TYPES[kind])


def _name(value: Any) -> str:
    return JSON_NAMES.get(type(value), type(value).__name__)


def render_interval(capabilities: dict[str, Any]) -> float:
    """`capabilities.events.coalesceMs` (0 to 1000 ms; absent or null is 0) in seconds."""
    events = capabilities.get("events")
    if events is None:
        return 0.0
    if not isinstance(events, dict):
        raise InvalidParams(
            "capabilities.events must be an object",
            errors=["capabilities.events: expected an object"],
        )
    ms = events.get("coalesceMs")
    if ms is None:
        return 0.0
    if isinstance(ms, bool) or not isinstance(ms, int | float) or not 0 <= ms <= MAX_COALESCE_MS:
        raise InvalidParams(
            f"capabilities.events.coalesceMs must be a number of milliseconds from 0 to "
            f"{MAX_COALESCE_MS}, got {ms!r}",
            errors=[f"capabilities.events.coalesceMs: expected 0 to {MAX_COALESCE_MS}"],
        )
    return ms / 1000


FILE_CAPABILITIES = ("read", "apply", "review")


def file_capabilities(capabilities: dict[str, Any]) -> dict[str, bool]:
    """`capabilities.files: {read?, apply?, review?}` (booleans; absent or null: false)."""
    files = capabilities.get("files")
    if files is None:
        return dict.fromkeys(FILE_CAPABILITIES, False)
    if not isinstance(files, dict):
        raise InvalidParams(
            "capabilities.files must be an object",
            errors=["capabilities.files: expected an object"],
        )
    problems = [
        f"capabilities.files.{name}: expected a boolean"
        for name in FILE_CAPABILITIES
        if files.get(name) is not None and not isinstance(files.get(name), bool)
    ]
    if problems:
        raise InvalidParams("capabilities.files: " + "; ".join(problems), errors=problems)
    return {name: files.get(name) is True for name in FILE_CAPABILITIES}


def file_system(capabilities: dict[str, Any]) -> tuple[bool, bool]:
    """`capabilities.fs.readTextFile` and `.writeTextFile` (absent or null: false)."""
    fs = capabilities.get("fs")
    if fs is None:
        return False, False
    if not isinstance(fs, dict):
        raise InvalidParams(
            "capabilities.fs must be an object", errors=["capabilities.fs: expected an object"]
        )
    found = []
    for name in ("readTextFile", "writeTextFile"):
        value = fs.get(name)
        if value is not None and not isinstance(value, bool):
            raise InvalidParams(
                f"capabilities.fs.{name} must be a boolean",
                errors=[f"capabilities.fs.{name}: expected a boolean"],
            )
        found.append(bool(value))
    return found[0], found[1]
