"""Messages: what makes a decoded JSON value a JSON-RPC 2.0 request, notification or
response. The protocol module answers anything else with `invalid_request`."""

from __future__ import annotations

from typing import Any


def is_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def shape_problem(obj: dict[str, Any]) -> str | None:
    """Why a decoded message is not a JSON-RPC 2.0 request, notification or response."""
    if obj.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in obj and not is_id(obj["id"]):
        return "id must be a string or an integer"
    if "params" in obj and not isinstance(obj["params"], dict | list):
        return "params must be an object or an array"
    if "method" in obj:
        return None if isinstance(obj["method"], str) else "method must be a string"
    if "id" not in obj:
        return "a message needs a method (request, notification) or an id (response)"
    error = obj.get("error")
    if "result" in obj and "error" not in obj:
        return None
    if (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
        and "result" not in obj
    ):
        return None
    return "a response needs a result or an error {code, message}"
