"""Whole turns through Session/Agent: the second request carries the tool traffic in wire shape."""

from __future__ import annotations

import json

import pytest

from .conftest import session_for, stream

RESULT = json.dumps({"content": "# Demo", "path": "README.md", "ok": True}, separators=(",", ":"))
MISSING = json.dumps({"error": "not found", "path": "b.txt", "ok": False}, separators=(",", ":"))
A_TXT = json.dumps({"content": "alpha", "path": "a.txt", "ok": True}, separators=(",", ":"))


@pytest.fixture
def project(tmp_path):
    (tmp_path / "README.md").write_text("# Demo")
    (tmp_path / "a.txt").write_text("alpha")
    return tmp_path


def bare(value):
    """A body without its prompt-cache breakpoints (`cache_control`)."""
    if isinstance(value, dict):
        return {k: bare(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [bare(v) for v in value]
    return value


def tool_names(body):
    tools = body["tools"]
    return [t.get("name") or t["function"]["name"] for t in tools]


async def test_anthropic_turn(server, monkeypatch, project):
    session, out = session_for("anthropic", server, monkeypatch, project)
    server.queue(stream("anthropic_tool.sse"), stream("anthropic_text.sse"))
    result = await session.turn("show me the readme")
    assert result.reply == "The README says: # Demo"
    assert result.stop_reason == "end_turn"
    assert result.usage == {"input_tokens": 942, "output_tokens": 57}
    assert out.of("saying") == ["Let me look.", "The README", " says: # Demo"]
    first, second = server.requests
    assert (first.method, first.path) == ("POST", "/v1/messages")
    assert first.headers["anthropic-version"] == "2023-06-01"
    assert first.headers["content-type"] == "application/json"
    body = first.json
    system = session.context[0]["content"]
    cached = {"type": "ephemeral"}  # a prompt-cache breakpoint (ANTHROPIC_CACHE_TTL)
    assert {k: body[k] for k in ("model", "max_tokens", "stream", "system")} == {
        "model": "claude-opus-4-5",
        "max_tokens": 16000,
        "stream": True,
        "system": [{"type": "text", "text": system, "cache_control": cached}],
    }
    assert "thinking" not in body
    assert "read" in tool_names(body)
    read = next(t for t in body["tools"] if t["name"] == "read")
    assert set(read) == {"name", "description", "input_schema"}
    assert [t.get("cache_control") for t in body["tools"]][-2:] == [None, cached]
    prompt = [{"type": "text", "text": "show me the readme", "cache_control": cached}]
    assert body["messages"] == [{"role": "user", "content": prompt}]
    assert second.json["messages"] == [
        {"role": "user", "content": prompt},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "read",
                    "input": {"path": "README.md"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": RESULT,
                    "is_error": False,
                    "cache_control": cached,
                },
            ],
        },
    ]


async def test_anthropic_thinking_pass_back_and_is_error(server, monkeypatch, project):
    monkeypatch.setenv("ANTHROPIC_THINKING_BUDGET", "4000")
    session, out = session_for("anthropic", server, monkeypatch, project)
    server.queue(stream("anthropic_thinking_tools.sse", 9), stream("anthropic_text.sse"))
    await session.turn("read a.txt and b.txt")
    assert "".join(out.of("thinking")) == "The user wants two files."
    first, second = server.requests
    assert first.json["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert bare(second.json["messages"][1:]) == [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": "The user wants two files.",
                    "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
                },
                {
                    "type": "redacted_thinking",
                    "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
                },
                {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a.txt"}},
                {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {"path": "b.txt"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "content": A_TXT,
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": MISSING,
                    "is_error": True,
                },
            ],
        },
    ]
    # the thinking of a finished turn is not kept: the next turn sends only text
    server.queue(stream("anthropic_text.sse"))
    await session.turn("thanks")
    cached = {"type": "ephemeral"}
    assert server.requests[2].json["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "read a.txt and b.txt"} | {"cache_control": cached}
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "The README says: # Demo"}]},
        {"role": "user", "content": [{"type": "text", "text": "thanks", "cache_control": cached}]},
    ]


async def test_openai_turn(server, monkeypatch, project):
    session, out = session_for("openai", server, monkeypatch, project)
    await session.provider.server()  # it says nothing of itself: the model stays gpt-4o
    server.queue(stream("openai_tool.sse"), stream("openai_text.sse"))
    result = await session.turn("show me the readme")
    assert result.reply == "The README says: # Demo"
    assert result.usage == {"input_tokens": 942, "output_tokens": 30}
    first, second = server.requests
    assert (first.method, first.path) == ("POST", "/v1/chat/completions")
    assert first.headers["authorization"].startswith("Bearer ")
    body = first.json
    assert {k: body[k] for k in ("model", "stream", "stream_options", "tool_choice")} == {
        "model": "gpt-4o",
        "stream": True,
        "stream_options": {"include_usage": True},
        "tool_choice": "auto",
    }
    assert "read" in tool_names(body)
    system = {"role": "system", "content": session.context[0]["content"]}
    assert body["messages"] == [system, {"role": "user", "content": "show me the readme"}]
    assert second.json["messages"] == [
        system,
        {"role": "user", "content": "show me the readme"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"README.md"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": RESULT},
    ]


async def test_openai_several_calls_content_empty(server, monkeypatch, project):
    monkeypatch.setenv("OPENAI_STREAM_USAGE", "0")
    session, out = session_for("openai", server, monkeypatch, project)
    server.queue(stream("openai_reasoning_tools.sse", 3), stream("openai_text.sse"))
    await session.turn("read a.txt and b.txt")
    assert "stream_options" not in server.requests[0].json
    assert server.requests[1].json["messages"][2:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"b.txt"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": A_TXT},
        {"role": "tool", "tool_call_id": "call_b", "content": MISSING},
    ]


async def test_ollama_turn(server, monkeypatch, project):
    monkeypatch.setenv("OLLAMA_THINK", "high")
    monkeypatch.setenv("OLLAMA_MODEL", "qwen3")
    session, out = session_for("ollama", server, monkeypatch, project)
    server.queue(stream("ollama_tool.ndjson"), stream("ollama_text.ndjson"))
    result = await session.turn("show me the readme")
    assert result.reply == "The README says: # Demo"
    assert result.usage == {"input_tokens": 942, "output_tokens": 30}
    assert out.of("thinking") == ["The user wants"]
    first, second = server.requests
    assert (first.method, first.path) == ("POST", "/api/chat")
    assert "authorization" not in first.headers
    body = first.json
    assert {k: body[k] for k in ("model", "stream", "think", "keep_alive")} == {
        "model": "qwen3",
        "stream": True,
        "think": "high",
        "keep_alive": "5m",
    }
    assert "options" not in body
    assert body["tools"][0]["type"] == "function"
    system = {"role": "system", "content": session.context[0]["content"]}
    assert second.json["messages"] == [
        system,
        {"role": "user", "content": "show me the readme"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {"function": {"name": "read", "arguments": {"path": "README.md"}}},
            ],
        },
        {"role": "tool", "tool_name": "read", "content": RESULT},
    ]


async def test_ollama_without_think_setting_sends_none(server, monkeypatch, project):
    monkeypatch.setenv("OLLAMA_NUM_CTX", "8192")
    session, _ = session_for("ollama", server, monkeypatch, project)
    server.queue(stream("ollama_text.ndjson"))
    await session.turn("hi")
    body = server.requests[0].json
    assert "think" not in body
    assert body["options"] == {"num_ctx": 8192}
    assert body["model"] == "gpt-oss:latest"


@pytest.mark.parametrize(
    "name, recorded",
    [
        ("anthropic", "anthropic_max_tokens.sse"),
        ("openai", "openai_length.sse"),
        ("ollama", "ollama_length.ndjson"),
    ],
)
async def test_a_turn_cut_off_by_the_token_limit_ends_with_max_tokens(
    name, recorded, server, monkeypatch, project
):
    session, _ = session_for(name, server, monkeypatch, project)
    server.queue(stream(recorded))
    result = await session.turn("show me the readme")
    assert (result.reply, result.stop_reason) == ("The README says: # Demo, a sm", "max_tokens")
    assert session.conversation.last == {"role": "assistant", "content": result.reply}
