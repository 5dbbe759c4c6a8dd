"""What small local models need from the providers: OPENAI_TOOL_CHOICE (a call forced,
then an answer forced), and a too-long conversation reported with how to recover."""

from __future__ import annotations

import pytest

from elelem_daemon.base.errors import ProviderError

from .conftest import REGISTRY, session_for, stream
from .replay import json_reply

LLAMA_OVERFLOW = {
    "error": {
        "code": 400,
        "message": "request (6010 tokens) exceeds the available context size (4096 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 6010,
        "n_ctx": 4096,
    }
}
HINT = (
    " (the conversation is too long for the model's context: "
    "/compact to summarise it, or /clear to start over); the prompt was not kept"
)
TOO_LONG = " (the prompt alone is too long for the model's context: it was not kept)"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "README.md").write_text("# Demo\n")
    return tmp_path


async def test_tool_choice_first_then_after_results(server, monkeypatch, project):
    monkeypatch.setenv("OPENAI_TOOL_CHOICE", " Required , none ")
    session, _ = session_for("openai", server, monkeypatch, project)
    server.queue(stream("openai_tool.sse"), stream("openai_text.sse"))
    assert (await session.turn("show me the readme")).reply == "The README says: # Demo"
    first, second = server.requests
    assert first.json["tool_choice"] == "required"
    assert second.json["messages"][-1]["role"] == "tool"
    assert second.json["tool_choice"] == "none"


async def test_one_tool_choice_goes_with_every_request(server, monkeypatch, project):
    monkeypatch.setenv("OPENAI_TOOL_CHOICE", "required")
    session, _ = session_for("openai", server, monkeypatch, project)
    server.queue(stream("openai_tool.sse"), stream("openai_text.sse"))
    await session.turn("show me the readme")
    assert [r.json["tool_choice"] for r in server.requests] == ["required", "required"]


async def test_the_default_tool_choice_is_auto(server, monkeypatch, project):
    session, _ = session_for("openai", server, monkeypatch, project)
    server.queue(stream("openai_tool.sse"), stream("openai_text.sse"))
    await session.turn("show me the readme")
    assert [r.json["tool_choice"] for r in server.requests] == ["auto", "auto"]


@pytest.mark.parametrize("raw", ["always", "required,none,auto", ",", "auto,", "x" * 500])
def test_a_bad_tool_choice_is_a_clear_error(monkeypatch, raw):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_TOOL_CHOICE", raw)
    with pytest.raises(ProviderError) as caught:
        REGISTRY.build_provider("openai")
    message = str(caught.value)
    assert message.startswith("OPENAI_TOOL_CHOICE must be auto, required or none, or two")
    assert len(message) < 200


@pytest.mark.parametrize(
    ("name", "payload", "text"),
    [
        (
            "openai",
            LLAMA_OVERFLOW,
            "openai 400: request (6010 tokens) exceeds the available context size "
            "(4096 tokens), try increasing it",
        ),
        (
            "openai",
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens.",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
            "openai 400: This model's maximum context length is 128000 tokens.",
        ),
        (
            "anthropic",
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 201234 tokens > 200000 maximum",
                },
            },
            "anthropic 400: prompt is too long: 201234 tokens > 200000 maximum",
        ),
    ],
)
async def test_a_conversation_too_long_says_how_to_recover(
    server, monkeypatch, project, name, payload, text
):
    session, out = session_for(name, server, monkeypatch, project)
    server.queue(json_reply(400, payload), stream("openai_text.sse"))
    result = await session.turn("a very long question")
    assert result.reply == f"Error: {text}{TOO_LONG}"  # no history to compact
    assert result.stop_reason == "error" and not result.kept
    assert out.of("say") == [(text + TOO_LONG, "error")]
    assert len(server.requests) == 1  # a 400 is not retried as it is
    assert len(session.conversation) == 0  # neither the prompt nor its error is kept


@pytest.mark.parametrize("retry", ["1", "0"])
async def test_a_refused_conversation_is_compacted_and_sent_again(
    server, monkeypatch, project, retry
):
    """llama.cpp's refusal with a history: compacted, then sent again (issue 32), or,
    with ELELEM_COMPACT_RETRY=0, not kept and said."""
    monkeypatch.setenv("ELELEM_COMPACT_RETRY", retry)
    session, out = session_for("openai", server, monkeypatch, project)
    session.conversation.add("user", "an old question")
    session.conversation.add("assistant", "an old answer")
    server.queue(
        json_reply(400, LLAMA_OVERFLOW), stream("openai_text.sse"), stream("openai_text.sse")
    )
    result = await session.turn("a very long question")
    text = "openai 400: request (6010 tokens) exceeds the available context size (4096 tokens)"
    if retry == "0":
        assert result.reply == f"Error: {text}, try increasing it{HINT}"
        assert [m["content"] for m in session.conversation] == ["an old question", "an old answer"]
        return
    assert result.stop_reason == "end_turn" and not result.reply.startswith("Error")
    assert [kind for _, kind in out.of("say")] == ["info"]
    assert out.of("say")[0][0].startswith("context compacted: 2 messages became 1")
    posts = [r for r in server.requests if r.method == "POST"]
    summary, resent = posts[1].json, posts[2].json
    assert "tools" not in summary and "an old question" in summary["messages"][-1]["content"]
    assert [m["content"] for m in resent["messages"][1:]] == [
        f"Context: {session.conversation[0]['content'].removeprefix('Context: ')}",
        "a very long question",
    ]


async def test_another_400_gets_no_hint(server, monkeypatch, project):
    session, _ = session_for("openai", server, monkeypatch, project)
    server.queue(json_reply(400, {"error": {"message": "tools[0] is invalid"}}))
    assert (await session.turn("hi")).reply == "Error: openai 400: tools[0] is invalid"
