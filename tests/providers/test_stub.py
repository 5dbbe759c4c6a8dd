import pytest

from elelem_daemon.providers.stub import StubProvider

TOOLS = [{"type": "function", "function": {"name": "read"}}]


async def events(prompt, messages=None, tools=TOOLS):
    messages = messages or [{"role": "user", "content": prompt}]
    return [e async for e in StubProvider().fetch(messages, tools)]


async def test_default_fetch_thinks_says_and_calls_the_first_tool():
    assert await events("hi") == [
        {"type": "thinking", "text": "considering the request"},
        {"type": "saying", "text": "let me check."},
        {"type": "doing", "id": "stub-1", "name": "read", "arguments": {}},
    ]
    assert (await events("hi", tools=[]))[-1] == {"type": "saying", "text": "let me check."}


async def test_after_a_tool_result_it_is_done():
    assert await events("", [{"role": "tool", "content": "{}"}]) == [
        {"type": "thinking", "text": "considering the request"},
        {"type": "saying", "text": "done."},
    ]


async def test_scripts():
    assert (await events('!tool execute {"command": "ls"}'))[-1] == {
        "type": "doing",
        "id": "stub-1",
        "name": "execute",
        "arguments": {"command": "ls"},
    }
    assert (await events("!echo hello there"))[1:] == [{"type": "saying", "text": "hello there"}]
    assert [e["text"] for e in (await events("!stream 3"))[1:]] == ["tok0 ", "tok1 ", "tok2 "]
    with pytest.raises(RuntimeError, match="boom"):
        await events("!fail boom")


@pytest.mark.parametrize(
    ("prompt", "says"),
    [
        ("!tool read {not json", "(the arguments are not JSON)"),
        ("!tool read [1, 2]", "(the arguments are not an object)"),
        ("!tool", "stub: !tool takes a tool name and a JSON object"),
        ("!stream many", "stub: !stream takes a count and a delay"),
        ("!stream 5 -1", "stub: !stream takes a count and a delay"),
        ("!stream 1 2 3", "stub: !stream takes a count and a delay"),
    ],
)
async def test_a_script_it_cannot_read_says_how_to_write_it(prompt: str, says: str) -> None:
    from elelem_daemon.base.errors import ProviderError

    with pytest.raises(ProviderError) as error:
        await events(prompt)
    assert says in str(error.value)
    for internal in ("Expecting", "invalid literal", "int()", "Traceback", "line 1 column"):
        assert internal not in str(error.value)


async def test_call_ids_are_unique_across_one_providers_fetches():
    """One provider serves a session, its turns and its task's child (same provider):
    each call it asks for has its own id, the first `stub-1`; a new provider starts over."""
    stub = StubProvider()

    async def ids(messages):
        return [e["id"] async for e in stub.fetch(messages, TOOLS) if e["type"] == "doing"]

    assert await ids([{"role": "user", "content": "hi"}]) == ["stub-1"]
    assert await ids([{"role": "user", "content": '!tool read {"path": "a"}'}]) == ["stub-2"]
    script = [{"role": "user", "content": '!tools [["read", {}], ["list", {}]]'}]
    assert await ids(script) == ["stub-3"]
    assert await ids([*script, {"role": "tool", "content": "{}"}]) == ["stub-4"]
    assert await ids([*script, {"role": "tool"}, {"role": "tool"}]) == []  # done.
    assert (await events("hi"))[-1]["id"] == "stub-1"  # a fresh provider
