"""Every ACP message checked against the vendored schemas (tests/acp_schema): ACP
1.21.0, and the stable and unstable v1 schemas of `@agentclientprotocol/sdk` 2.4.0.

`Checker.check(message, sender)` validates a message as JSON-RPC (the schema's top
level), then its params or result against the definition each schema names for its
method (`x-method`): requests and notifications by their method, responses by the
method of the request they answer (remembered per sender), errors as `Error`. A
message is checked against every schema that names its method; a method that none
names must be an extension (`_...`), only checked as JSON-RPC.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

FOLDER = Path(__file__).parents[1] / "acp_schema"
V1_21 = "schema-v1.21.0.json"
SDK_STABLE = "schema-sdk-2.4.0.json"
SDK_UNSTABLE = "schema-sdk-2.4.0-unstable.json"
ALL = (V1_21, SDK_STABLE, SDK_UNSTABLE)
SCHEMA = FOLDER / V1_21  # the version docs/acp.md names first


@cache
def schema(name: str = V1_21) -> dict[str, Any]:
    return json.loads((FOLDER / name).read_text())  # type: ignore[no-any-return]


@cache
def definitions(name: str = V1_21) -> dict[tuple[str, str], str]:
    """(method, Request | Response | Notification) -> the definition's name."""
    found = {}
    for title, body in schema(name)["$defs"].items():
        method = body.get("x-method")
        for part in ("Request", "Response", "Notification"):
            if method and title.endswith(part):
                found[(method, part)] = title
    return found


@cache
def validator(definition: str | None, name: str = V1_21) -> Draft202012Validator:
    whole = schema(name)
    if definition is None:
        return Draft202012Validator(whole)
    return Draft202012Validator({"$defs": whole["$defs"], "$ref": f"#/$defs/{definition}"})


class Checker:
    def __init__(self, schemas: tuple[str, ...] = ALL) -> None:
        self.schemas = schemas
        self.asked: dict[tuple[str, str], str] = {}  # (sender, id) -> method
        self.checked: list[tuple[str, str, str]] = []  # (sender, method, part)
        self.by_schema: set[tuple[str, str, str]] = set()  # (schema, method, part)

    def check(self, message: dict[str, Any], sender: str) -> None:
        """Raise jsonschema's ValidationError for a message that breaks a schema;
        `sender` is "agent" or "client"."""
        for name in self.schemas:
            validator(None, name).validate(message)
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
            for name in self.schemas:
                validator("Error", name).validate(message["error"])
            self.checked.append((sender, method or "?", "Error"))
        elif method is not None:
            self._check(method, "Response", message.get("result"), sender)

    def _check(self, method: str, part: str, body: Any, sender: str) -> None:
        named = [(n, definitions(n).get((method, part))) for n in self.schemas]
        named = [(n, d) for n, d in named if d is not None]
        if not named:
            assert method.startswith("_"), f"{sender} sent {method}, in no ACP schema"
            return
        for name, definition in named:
            validator(definition, name).validate(body)
            self.by_schema.add((name, method, part))
        self.checked.append((sender, method, part))
