"""Each provider turns its API's recorded stream into the agent's events."""

from __future__ import annotations

import gzip
import zlib

import pytest

from .conftest import STREAMS, collect, stream
from .replay import Reply

ALL = ["anthropic", "openai", "ollama"]
TOOL = {
    "anthropic": "anthropic_tool.sse",
    "openai": "openai_tool.sse",
    "ollama": "ollama_tool.ndjson",
}
TEXT = {
    "anthropic": "anthropic_text.sse",
    "openai": "openai_text.sse",
    "ollama": "ollama_text.ndjson",
}
TOOLS = {
    "anthropic": "anthropic_thinking_tools.sse",
    "openai": "openai_reasoning_tools.sse",
    "ollama": "ollama_tools.ndjson",
}
CALL_ID = {"anthropic": "toolu_01", "openai": "call_abc", "ollama": "call_1"}


@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_text_streams_as_saying_with_usage(provider, server):
    server.queue(stream(TEXT[provider.name]))
    events = await collect(provider)
    assert events == [
        {"type": "saying", "text": "The README"},
        {"type": "saying", "text": " says: # Demo"},
        {"type": "usage", "input_tokens": 530, "output_tokens": 9},
    ]


@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_one_tool_call(provider, server):
    server.queue(stream(TOOL[provider.name]))
    events = [e for e in await collect(provider) if e["type"] != "thinking"]
    assert events == [
        {"type": "saying", "text": "Let me look."},
        {
            "type": "doing",
            "id": CALL_ID[provider.name],
            "name": "read",
            "arguments": {"path": "README.md"},
        },
        {
            "type": "usage",
            "input_tokens": 412,
            "output_tokens": 48 if provider.name == "anthropic" else 21,
        },
    ]


@pytest.mark.parametrize("size", [1, 7, 64])
@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_thinking_and_several_tool_calls_split_into_fragments(provider, server, size):
    """Byte-sized chunks split lines and events; the arguments arrive in several pieces."""
    server.queue(stream(TOOLS[provider.name], size))
    events = await collect(provider)
    thinking = "".join(e["text"] for e in events if e["type"] == "thinking")
    assert thinking == ("Two files." if provider.name == "ollama" else "The user wants two files.")
    calls = [e for e in events if e["type"] == "doing"]
    ids = {
        "anthropic": ["toolu_a", "toolu_b"],
        "openai": ["call_a", "call_b"],
        "ollama": ["call_1", "call_x9"],
    }[provider.name]
    assert calls == [
        {"type": "doing", "id": ids[0], "name": "read", "arguments": {"path": "a.txt"}},
        {"type": "doing", "id": ids[1], "name": "read", "arguments": {"path": "b.txt"}},
    ]
    assert events[-1] == {"type": "usage", "input_tokens": 600, "output_tokens": 71}


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
async def test_anthropic_keeps_thinking_blocks_with_signatures(provider, server):
    server.queue(stream("anthropic_thinking_tools.sse", 5))
    events = await collect(provider)
    (keep,) = [e for e in events if e["type"] == "keep"]
    assert keep["data"] == {
        "thinking_blocks": [
            {
                "type": "thinking",
                "thinking": "The user wants two files.",
                "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
            },
            {
                "type": "redacted_thinking",
                "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
            },
        ]
    }


@pytest.mark.parametrize("provider", ["openai"], indirect=True)
async def test_openai_tool_calls_emitted_even_when_finish_reason_is_stop(provider, server):
    body = (
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1",'
        b'"function":{"name":"read","arguments":"{\\"path\\":\\"x\\"}"}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    from .replay import Reply

    server.queue(Reply([body]))
    events = await collect(provider)
    assert events == [{"type": "doing", "id": "c1", "name": "read", "arguments": {"path": "x"}}]


CUT = {
    "anthropic": "anthropic_max_tokens.sse",
    "openai": "openai_length.sse",
    "ollama": "ollama_length.ndjson",
}


@pytest.mark.parametrize("size", [None, 5])
@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_a_reply_cut_off_by_the_token_limit_says_so(provider, server, size):
    """Anthropic `stop_reason: max_tokens`, OpenAI `finish_reason: length`, Ollama
    `done_reason: length`: the same `stop` event."""
    server.queue(stream(CUT[provider.name], size))
    events = await collect(provider)
    assert events == [
        {"type": "saying", "text": "The README"},
        {"type": "saying", "text": " says: # Demo, a sm"},
        {"type": "stop", "reason": "max_tokens"},
        {"type": "usage", "input_tokens": 530, "output_tokens": 8},
    ]


@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_a_whole_reply_reports_no_stop(provider, server):
    server.queue(stream(TEXT[provider.name]))
    assert all(e["type"] != "stop" for e in await collect(provider))


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("provider", ["anthropic", "openai"], indirect=True)
async def test_a_compressed_stream_is_decoded(provider, server, encoding):
    # an answer without content encoding is read raw (lines.body); one with is decoded
    data = (STREAMS / TEXT[provider.name]).read_bytes()
    packed = gzip.compress(data) if encoding == "gzip" else zlib.compress(data)
    middle = len(packed) // 2
    server.queue(Reply([packed[:middle], packed[middle:]], headers={"Content-Encoding": encoding}))
    events = await collect(provider)
    assert [e["text"] for e in events if e["type"] == "saying"] == ["The README", " says: # Demo"]
