"""What an OpenAI-compatible server says of itself (providers/served.py), against a fake
llama.cpp on 127.0.0.1: a `required` call forced into the call's shape by a JSON schema,
a default token cap, `/model` listing what the server serves and naming the model that
answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from elelem_daemon.faces.terminal.editor import status_text

from .conftest import session_for, stream
from .replay import ReplayServer, Reply, json_reply

SERVED = "SmolLM2-135M-Instruct.Q4_1"


def chunk(delta: dict[str, Any], finish: str | None = None, model: str = SERVED) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    data = {"object": "chat.completion.chunk", "model": model, "choices": [choice]}
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def content(*pieces: str, finish: str = "stop") -> Reply:
    """llama.cpp's stream of an answer given as content, in pieces."""
    body = [chunk({"role": "assistant", "content": p}) for p in pieces]
    return Reply([*body, chunk({}, finish), b"data: [DONE]\n\n"], content_type="text/event-stream")


def llama(server: ReplayServer, n_ctx: int = 4096, models: list[str] | None = None) -> None:
    """Make the fake server answer as llama.cpp's does: `/props`, `/v1/models`."""
    props = {"default_generation_settings": {"n_ctx": n_ctx}, "build_info": "b1"}
    server.routes["/props"] = json_reply(200, props)
    entries = [{"id": m, "object": "model", "owned_by": "llamacpp"} for m in models or [SERVED]]
    server.routes["/v1/models"] = json_reply(200, {"object": "list", "data": entries})


@pytest.fixture
def project(tmp_path):
    (tmp_path / "README.md").write_text("# Demo\n")
    return tmp_path


async def test_a_required_call_on_llama_cpp_is_forced_into_the_call_shape(
    server, monkeypatch, project
):
    llama(server)
    monkeypatch.setenv("OPENAI_TOOL_CHOICE", "required,none")
    session, out = session_for("openai", server, monkeypatch, project)
    call = '{"name": "read", "arguments": {"path": "README.md"}}'
    server.queue(content(call[:20], call[20:]), stream("openai_text.sse"))
    result = await session.turn("show me the readme")
    first, second = server.requests
    assert first.json["tool_choice"] == "required"
    schema = first.json["response_format"]["json_schema"]["schema"]
    shapes = schema["anyOf"]
    names = [s["properties"]["name"]["const"] for s in shapes]
    assert names == [t["function"]["name"] for t in first.json["tools"]]
    read = shapes[names.index("read")]
    assert read["properties"]["arguments"]["required"] == ["path"]
    assert read["required"] == ["name", "arguments"]
    # the JSON came back as content: it is the call, not words shown to the user
    assert [(c["name"], c["arguments"]) for c in out.of("doing")] == [
        ("read", {"path": "README.md"})
    ]
    assert not any("{" in text for text in out.of("saying"))
    assert "response_format" not in second.json
    assert "tools" not in second.json and "tool_choice" not in second.json  # none: no tools
    assert second.json["messages"][-1]["role"] == "tool"
    assert result.reply == "The README says: # Demo"
    assert [r.path for r in server.gets] == ["/props", "/v1/models"]  # asked once


async def test_the_default_cap_on_llama_cpp_is_an_eighth_of_its_context(
    server, monkeypatch, project
):
    llama(server, n_ctx=4096)
    session, _ = session_for("openai", server, monkeypatch, project)
    await session.provider.server()  # the lookup, begun with the session, has answered
    server.queue(stream("openai_text.sse"), stream("openai_text.sse"))
    await session.turn("hi")
    assert server.requests[0].json["max_tokens"] == 512
    monkeypatch.setenv("OPENAI_MAX_TOKENS", "77")  # the setting wins
    session.switch(model=SERVED)
    await session.turn("again")
    assert server.requests[1].json["max_tokens"] == 77


async def test_a_server_that_is_not_llama_cpp_gets_neither(server, monkeypatch, project):
    monkeypatch.setenv("OPENAI_TOOL_CHOICE", "required,none")
    session, _ = session_for("openai", server, monkeypatch, project)  # /props: 404
    server.queue(stream("openai_tool.sse"), stream("openai_text.sse"))
    await session.turn("show me the readme")
    first, second = server.requests
    assert first.json["tool_choice"] == "required"
    assert "response_format" not in first.json and "max_tokens" not in first.json
    assert second.json["tool_choice"] == "none" and second.json["tools"]


async def test_a_forced_answer_cut_short_is_asked_again(server, monkeypatch, project):
    """A string the model never closed, cut off by the cap: nothing of it was shown, so
    the request is sent again, and the call that comes then is the call."""
    llama(server)
    monkeypatch.setenv("OPENAI_TOOL_CHOICE", "required")
    session, out = session_for("openai", server, monkeypatch, project)
    call = '{"name": "read", "arguments": {"path": "README.md"}}'
    server.queue(content('{"name": "read", "argum', finish="length"), content(call), content("x"))
    await session.turn("show me the readme")
    first, second = server.requests[:2]
    assert first.json == second.json  # the same request again
    assert [c["name"] for c in out.of("doing")] == ["read"]
    assert not any("argum" in text for text in out.of("saying"))


@pytest.mark.parametrize(
    "answer",
    [
        '{"name": 3, "arguments": {}}',
        '{"name": "read", "arguments": "x"}',
        "[1]",
        "plain",
        '{"name": "read", "arguments": {"path": "' + "4." * 5000,
    ],
)
async def test_a_forced_answer_that_is_no_call_ends_in_a_clear_error(
    server, monkeypatch, project, answer
):
    llama(server)
    monkeypatch.setenv("OPENAI_TOOL_CHOICE", "required")
    monkeypatch.setenv("ELELEM_RETRIES", "1")
    session, out = session_for("openai", server, monkeypatch, project)
    server.queue(content(answer), content(answer))
    result = await session.turn("show me the readme")
    assert len(server.requests) == 2  # asked once more, then no more
    assert out.of("doing") == [] and out.of("saying") == []
    assert result.stop_reason == "error"
    assert result.reply.startswith(
        "Error: openai: the answer forced into a tool call is not one (cut off by the token cap?): "
    )
    assert len(result.reply) < 300


async def test_model_lists_what_the_server_serves_and_names_who_answers(
    server, monkeypatch, project
):
    llama(server, models=[SERVED, "other"])
    session, _ = session_for("openai", server, monkeypatch, project)  # OPENAI_MODEL unset
    await session.provider.server()  # the lookup, begun with the session, has answered
    server.queue(content("Hello."))
    await session.turn("hi")
    assert server.requests[0].json["model"] == SERVED  # not gpt-4o: the server's own
    said = (await session.command("/model")).output
    assert f"model: {SERVED}" in said
    assert "available: " in said and "other" in said
    assert SERVED in status_text(session)
    assert "gpt-4o" not in status_text(session)


async def test_the_answering_model_is_the_one_the_answers_name(server, monkeypatch, project):
    llama(server)
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4o")  # asked for, but the server has its own
    session, _ = session_for("openai", server, monkeypatch, project)
    server.queue(content("Hello."))
    await session.turn("hi")
    said = (await session.command("/model")).output
    assert f"model: {SERVED} (asked for gpt-4o)" in said
    assert status_text(session).split(" · ")[1] == SERVED


async def test_a_hostile_model_list_is_bounded(server, monkeypatch, project):
    entries: list[Any] = [{"id": "m" * 5000, "owned_by": "llamacpp"}, 7, {"id": None}]
    entries += [{"id": f"model-{n}"} for n in range(5000)]
    server.routes["/v1/models"] = json_reply(200, {"data": entries})
    session, _ = session_for("openai", server, monkeypatch, project)
    models = await session.provider.list_models()
    assert len(models) <= 200 and all(len(m) <= 200 for m in models)
    said = (await session.command("/model")).output
    assert len(said) < 30_000


async def test_a_server_that_says_nothing_never_fails_a_turn(server, monkeypatch, project):
    server.routes["/props"] = Reply([b"not json"], content_type="application/json")
    server.routes["/v1/models"] = json_reply(500, {"error": "down"})
    session, _ = session_for("openai", server, monkeypatch, project)
    await session.provider.server()
    server.queue(stream("openai_text.sse"))
    result = await session.turn("hi")
    assert result.reply == "The README says: # Demo"
    assert "max_tokens" not in server.requests[0].json
    assert server.requests[0].json["model"] == "gpt-4o"


async def test_a_hostile_model_name_in_the_answers_is_bounded(server, monkeypatch, project):
    llama(server)
    session, _ = session_for("openai", server, monkeypatch, project)
    hostile = "\x1b]0;pwned\x07\x1b[2J" + "m" * 10_000
    body = [chunk({"role": "assistant", "content": "Hi."}, model=hostile)]
    body += [chunk({}, "stop", model=hostile), b"data: [DONE]\n\n"]
    server.queue(Reply(body, content_type="text/event-stream"))
    await session.turn("hi")
    assert len(session.answering or "") <= 200
    line = status_text(session)
    assert "\x1b" not in line and "\x07" not in line and len(line) < 400
