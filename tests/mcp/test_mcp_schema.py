"""A server's inputSchema is hostile until checked: bounded, never fetched, no regular
expression run on the event loop, a broken schema leaves its tool out with a reason."""

from __future__ import annotations

import time

import pytest

from elelem_daemon.mcp import schema
from elelem_daemon.mcp.toolset import McpTool, build


def tool(input_schema: dict) -> McpTool:
    return McpTool("s__t", "s", "t", "", input_schema)


def test_arguments_are_validated_with_elelem_messages() -> None:
    t = tool({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    assert t.validate({"n": 1}) == []
    assert t.validate({}) == ["object at root is missing required properties: n"]
    assert t.validate({"n": "x"}) == ["value at `/n` is not an integer"]


def test_local_refs_work_and_the_schema_reaches_providers_as_given() -> None:
    given = {
        "type": "object",
        "$defs": {"pos": {"type": "integer", "minimum": 0}},
        "properties": {"n": {"$ref": "#/$defs/pos"}, "pattern": {"type": "string"}},
        "additionalProperties": False,
    }
    t = tool(given)
    assert t.validate({"n": 2, "pattern": "kept"}) == []
    assert t.validate({"n": -1}) == ["number at `/n` is less than: 0"]
    assert t.validate({"z": 1}) == ["object property at `/z` is a disallowed additional property"]
    assert t.definition()["function"]["parameters"] == given


def test_a_remote_ref_is_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    def fetch(*args, **kwargs):  # pragma: no cover - the point is that it is not called
        raise AssertionError("fetched a remote $ref")

    monkeypatch.setattr(urllib.request, "urlopen", fetch)
    t = tool({"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}})
    assert t.validate({"a": 1}) == []  # cannot decide locally: the server will


def test_a_catastrophic_pattern_is_not_run_locally() -> None:
    evil = {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}},
        "patternProperties": {"^(b+)+$": {"type": "string"}},
        "additionalProperties": False,
    }
    assert schema.problem(evil) is None
    t = tool(evil)
    start = time.perf_counter()
    assert t.validate({"s": "a" * 40 + "!"}) == []
    assert t.validate({"bbbb": "ok"}) == []  # patternProperties' names are not refused
    assert time.perf_counter() - start < 5  # the regex would take hours


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ("not a schema", "not a JSON object"),
        ({"type": "array"}, 'type "array"'),
        ({"type": "object", "properties": {"a": {"type": 5}}}, "not valid JSON Schema"),
        ({"type": "object", "description": "x" * 200_000}, "characters of JSON"),
    ],
)
def test_a_bad_schema_is_a_reason(bad: object, expected: str) -> None:
    assert expected in (schema.problem(bad) or "")


def test_a_deep_schema_is_refused_without_recursion() -> None:
    deep: dict = {"type": "object"}
    node = deep
    for _ in range(10_000):
        node["not"] = {}
        node = node["not"]
    assert "deeper than" in (schema.problem(deep) or "")


def test_build_leaves_a_bad_tool_out_and_keeps_the_rest() -> None:
    listing = [
        {"name": "good", "description": "ok", "inputSchema": {"type": "object"}},
        {"name": "bad", "inputSchema": {"type": "string"}},
        {"name": "", "inputSchema": {}},
        {"name": "weird", "inputSchema": {"properties": {"x": True}, "required": ["x"]}},
        {"name": "invalid", "inputSchema": {"properties": {"x": "no"}, "required": [1]}},
    ]
    found = build("srv", "srv", listing, [])
    assert [t.name for t in found.tools] == ["srv__good", "srv__weird"]
    assert any("tool bad is left out" in p for p in found.problems)
    weird = found.tools[1]
    assert weird.params == {}  # a boolean schema: /tools shows it safely
    assert weird.schema == {"type": "object", "properties": {"x": True}, "required": ["x"]}
    assert any(
        "tool invalid is left out: its inputSchema is not valid" in p for p in found.problems
    )


def test_a_validator_that_breaks_lets_the_call_through() -> None:
    t = tool({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}})
    assert t.validate({"a": 1}) == []
