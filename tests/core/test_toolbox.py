import asyncio
import json

import pytest

from elelem_daemon.result import Result
from elelem_daemon.tool import Tool
from elelem_daemon.toolbox import Toolbox


def box_with_read(calls=None):
    box = Toolbox()
    calls = calls if calls is not None else []

    def read(args):
        calls.append(("handler", args))
        return {"content": "# My project\n...", "path": args["path"]}

    box.add("read", "Read file", {"path": {"type": "string"}}, ["path"], ["open"], read)
    box.add(
        "write",
        "Write file",
        {"path": {"type": "string"}, "content": {"type": "string"}},
        ["path", "content"],
        handler=lambda args: {"bytes": 1},
    )
    box.add(
        "execute",
        "Run",
        {"command": {"type": "string"}},
        ["command"],
        ["bash"],
        lambda args: {"exit_status": 0, "content": ""},
    )
    return box, calls


async def test_success_wraps_the_payload_with_ok_last():
    box, _ = box_with_read()
    result = await box.run("read", {"path": "README.md"})
    assert result.ok
    assert result.to_json() == '{"content":"# My project\\n...","path":"README.md","ok":true}'


async def test_alias_resolves_to_its_tool():
    box, calls = box_with_read()
    result = await box.run("open", {"path": "README.md"})
    assert result.ok and calls == [("handler", {"path": "README.md"})]
    assert box.resolve("open").name == "read"


async def test_unknown_tool_gets_a_stand_in_that_lists_the_real_names():
    box, _ = box_with_read()
    assert box.resolve("opne").name == "opne?"
    result = await box.run("opne", {"path": "x"})
    assert result.to_json() == (
        '{"error":"unknown tool: \\"opne\\". Available: read, write, execute.","ok":false}'
    )


async def test_validation_failure_runs_nothing():
    box, calls = box_with_read()
    box.before(lambda args, tool_name: calls.append("before"))
    box.after(lambda args, result, tool_name: calls.append("after"))
    result = await box.run("read", {})
    assert result.to_json() == (
        '{"error":"object at root is missing required properties: path","ok":false}'
    )
    assert calls == []


async def test_all_missing_required_properties_are_named_together():
    box, _ = box_with_read()
    result = await box.run("write", {})
    assert result.error == "object at root is missing required properties: path, content"


@pytest.mark.parametrize(
    ("schema", "args", "message"),
    [
        ({"path": {"type": "string"}}, {"path": 1}, "value at `/path` is not a string"),
        ({"n": {"type": "integer"}}, {"n": "x"}, "value at `/n` is not an integer"),
        ({"b": {"type": "boolean"}}, {"b": 1}, "value at `/b` is not a boolean"),
        ({"a": {"type": "array"}}, {"a": 1}, "value at `/a` is not an array"),
        (
            {"mode": {"enum": ["a", "b"]}},
            {"mode": "c"},
            'value at `/mode` is not one of: ["a", "b"]',
        ),
        (
            {"x": {"type": "string", "minLength": 1}},
            {"x": ""},
            "string length at `/x` is less than: 1",
        ),
        (
            {"x": {"type": "string", "maxLength": 2}},
            {"x": "abc"},
            "string length at `/x` is greater than: 2",
        ),
        ({"n": {"type": "number", "minimum": 0}}, {"n": -1}, "number at `/n` is less than: 0"),
        ({"n": {"type": "number", "maximum": 5}}, {"n": 6}, "number at `/n` is greater than: 5"),
        (
            {"x": {"type": "string", "pattern": "^a"}},
            {"x": "b"},
            "string at `/x` does not match pattern: ^a",
        ),
        (
            {"o": {"type": "object", "properties": {"k": {"type": "string"}}}},
            {"o": {"k": 1}},
            "value at `/o/k` is not a string",
        ),
    ],
)
async def test_validation_messages_read_like_json_schemer(schema, args, message):
    box = Toolbox()
    box.add("t", "", schema, handler=lambda a: {})
    assert (await box.run("t", args)).error == message


async def test_additional_properties_and_root_type():
    class Strict(Tool):
        @property
        def schema(self):
            return {**super().schema, "additionalProperties": False}

    box = Toolbox()
    box.register(Strict("t", "", {"a": {"type": "string"}}, handler=lambda a: {}))
    result = await box.run("t", {"a": "x", "extra": 1})
    assert result.error == "object property at `/extra` is a disallowed additional property"
    assert (await box.run("t", [])).error == "value at root is not an object"


async def test_hook_order_global_then_tool_and_after_hooks_see_the_return_value():
    box, calls = box_with_read()
    box.before(lambda args, tool_name: calls.append(("before *", tool_name)))
    box.before(lambda args: calls.append("before read"), tool="read")
    box.after(lambda args, result, tool_name: calls.append(("after *", result["path"])))
    box.after(lambda args, result: calls.append(("after read", result["path"])), tool="read")
    await box.run("open", {"path": "README.md"})
    assert calls == [
        ("before *", "read"),
        "before read",
        ("handler", {"path": "README.md"}),
        ("after *", "README.md"),
        ("after read", "README.md"),
    ]


async def test_async_hooks_and_handlers_are_awaited():
    box = Toolbox()
    seen = []

    async def hook(args, tool_name):
        await asyncio.sleep(0)
        seen.append(tool_name)

    async def handler(args):
        return {"value": args["n"] * 2}

    box.add("double", "", {"n": {"type": "integer"}}, ["n"], handler=handler)
    box.before(hook)
    assert (await box.run("double", {"n": 2})).payload == {"value": 4}
    assert seen == ["double"]


async def test_an_error_key_is_a_failure():
    box = Toolbox()
    box.add("read", "", {}, handler=lambda args: {"error": "not found"})
    assert (await box.run("read", {})).to_json() == '{"error":"not found","ok":false}'


async def test_a_raising_before_hook_refuses_the_call():
    box, calls = box_with_read()

    def deny(args, tool_name):
        raise PermissionError(f"Permission denied: {tool_name}")

    box.before(deny)
    result = await box.run("execute", {"command": "rm -rf /"})
    assert result.to_json() == (
        '{"error":"Permission denied: execute","name":"execute",'
        '"args":{"command":"rm -rf /"},"ok":false}'
    )
    assert calls == []


async def test_a_raising_handler_or_after_hook_is_a_failure_carrying_name_and_args():
    box = Toolbox()
    box.add("boom", "", {}, handler=lambda args: 1 / 0)
    result = await box.run("boom", {"k": "v"})
    assert result.to_dict() == {
        "error": "division by zero",
        "name": "boom",
        "args": {"k": "v"},
        "ok": False,
    }
    box.add("fine", "", {}, handler=lambda args: {"x": 1})
    box.after(lambda args, result: (_ for _ in ()).throw(RuntimeError("after")), tool="fine")
    assert (await box.run("fine", {})).error == "after"


async def test_hook_return_values_are_ignored():
    box, _ = box_with_read()
    box.before(lambda args, tool_name: False)
    assert (await box.run("read", {"path": "a"})).ok


async def test_decorator_form_and_definitions():
    box = Toolbox()

    @box.add("hello", "Say hello", {"name": {"type": "string"}}, ["name"])
    def hello(args):
        return {"greeting": f"hello {args['name']}"}

    assert hello({"name": "x"}) == {"greeting": "hello x"}
    assert box.definitions() == [
        {
            "type": "function",
            "function": {
                "name": "hello",
                "description": "Say hello",
                "parameters": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            },
        }
    ]
    assert "hello" in box and len(box) == 1
    box.clear()
    assert box.names() == []


def test_result_json_keeps_utf8_and_an_existing_ok_in_place():
    assert Result({"content": "héllo"}).to_json() == '{"content":"héllo","ok":true}'
    assert json.loads(Result({"ok": "x", "a": 1}).to_json()) == {"ok": True, "a": 1}
    assert list(Result({"ok": "x", "a": 1}).to_dict()) == ["ok", "a"]
    assert Result.wrap({"error": "e"}).ok is False
    assert Result.wrap("text").payload == {"content": "text"}
