"""Every ACP message checked against the vendored 1.21.0 schema (tests/acp_schema).

`Checker.check(message, sender)` validates a message as JSON-RPC (the schema's top
level), then its params or result against the definition the schema names for its
method (`x-method`): requests and notifications by their method, responses by the
method of the request they answer (remembered per sender), errors as `Error`.
Methods the schema does not name (`_` extensions) are only checked as JSON-RPC.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA = Path(__file__).parents[1] / "acp_schema" / "schema-v1.21.0.json"


@cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text())  # type: ignore[no-any-return]


@cache
def definitions() -> dict[tuple[str, str], str]:
    """(method, Request | Response | Notification) -> the definition's name."""
    found = {}
    for name, body in schema()["$defs"].items():
        method = body.get("x-method")
        for part in ("Request", "Response", "Notification"):
            if method and name.endswith(part):
                found[(method, part)] = name
    return found


@cache
def validator(name: str | None) -> Draft202012Validator:
    whole = schema()
    if name is None:
        return Draft202012Validator(whole)
    return Draft202012Validator({"$defs": whole["$defs"], "$ref": f"#/$defs/{name}"})


class Checker:
    def __init__(self) -> None:
        self.asked: dict[tuple[str, str], str] = {}  # (sender, id) -> method
        self.checked: list[tuple[str, str, str]] = []  # (sender, method, part)

    def check(self, message: dict[str, Any], sender: str) -> None:
        """Raise jsonschema's ValidationError for a message that breaks the schema;
        `sender` is "agent" or "client"."""
        validator(None).validate(message)
        other = "client" if sender == "agent" else "agent"
        if "method" in message:
            method = message["method"]
            part = "Request" if "id" in message else "Notification"
            if part == "Request":
                self.asked[(sender, json.dumps(message["id"]))] = method
            self._check(method, part, message.get("params"), sender)
            return
        method = self.asked.pop((other, json.dumps(message.get("id"))), None)
        if "error" in message:
            validator("Error").validate(message["error"])
            self.checked.append((sender, method or "?", "Error"))
        elif method is not None:
            self._check(method, "Response", message.get("result"), sender)

    def _check(self, method: str, part: str, body: Any, sender: str) -> None:
        name = definitions().get((method, part))
        if name is None:
            assert method.startswith("_"), f"{sender} sent {method}, not in ACP 1.21"
            return
        validator(name).validate(body)
        self.checked.append((sender, method, part))
