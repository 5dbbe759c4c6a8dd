"""The compiled validity check: a fast "valid", and jsonschema's word on everything else."""

import pytest

from elelem_daemon.tool import Tool


def test_valid_arguments_pass_the_compiled_check():
    tool = Tool("t", "", {"path": {"type": "string"}, "n": {"type": "integer"}}, ["path"])
    assert tool.validate({"path": "a", "n": 2}) == []
    assert tool._valid is not None


def test_rejected_arguments_get_every_jsonschema_message():
    tool = Tool("t", "", {"a": {"type": "string"}, "b": {"type": "integer"}}, ["a", "b"])
    assert sorted(tool.validate({"b": "x"})) == [
        "object at root is missing required properties: a",
        "value at `/b` is not an integer",
    ]


def test_where_the_compiled_check_is_stricter_jsonschema_decides():
    tool = Tool("t", "", {"to": {"type": "string", "format": "email"}})
    assert tool.validate({"to": "not an address"}) == []  # formats annotate, as in jsonschema


@pytest.mark.parametrize(
    "params, args, message",
    [
        (
            {"pair": {"type": "array", "prefixItems": [{"type": "string"}]}},
            {"pair": [1]},
            "value at `/pair/0` is not a string",
        ),
        (
            {"o": {"type": "object", "dependentRequired": {"a": ["b"]}}},
            {"o": {"a": 1}},
            "value at `/o` does not match schema: 'b' is a dependency of 'a'",
        ),
    ],
)
def test_newer_keywords_are_left_to_jsonschema(params, args, message):
    tool = Tool("t", "", params)
    assert tool.validate(args) == [message]
    assert tool._valid is None


async def test_a_broken_schema_fails_the_call_not_the_turn():
    from elelem_daemon.toolbox import Toolbox

    toolbox = Toolbox()
    toolbox.add("t", "", {"a": {"type": 5}}, handler=lambda args: {"ran": True})
    result = await toolbox.run("t", {"a": 1})
    assert not result.ok
    assert result.error.startswith("cannot check the arguments of t: ")
