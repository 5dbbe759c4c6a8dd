"""Tool arguments that are not JSON become a tool error the model reads; cancelling closes
the HTTP stream at once."""

from __future__ import annotations

import asyncio
import json

import pytest

from .conftest import session_for, stream
from .replay import Hang, Reply
from .samples import FIRST

BAD_CALL = {
    "anthropic": (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":'
        b'{"input_tokens":5,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"tool_use","id":"toolu_9","name":"read","input":{}}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"{\\"path\\": \\"READ"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    ),
    "openai": (
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"toolu_9",'
        b'"type":"function","function":{"name":"read","arguments":"{\\"path\\": \\"READ"}}]},'
        b'"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
    ),
    "ollama": (
        b'{"message":{"role":"assistant","content":"","tool_calls":[{"id":"toolu_9","function":'
        b'{"name":"read","arguments":"{\\"path\\": \\"READ"}}]},"done":false}\n'
        b'{"message":{"role":"assistant","content":""},"done":true}\n'
    ),
}
TEXT = {
    "anthropic": "anthropic_text.sse",
    "openai": "openai_text.sse",
    "ollama": "ollama_text.ndjson",
}


def tool_result(name: str, body: dict) -> tuple[str, bool | None]:
    """The tool result of the second request, and Anthropic's is_error."""
    last = body["messages"][-1]
    if name == "anthropic":
        (block,) = last["content"]
        return block["content"], block["is_error"]
    return last["content"], None


@pytest.mark.parametrize("name", ["anthropic", "openai", "ollama"])
async def test_bad_tool_json_becomes_a_tool_error(name, server, monkeypatch, tmp_path):
    session, out = session_for(name, server, monkeypatch, tmp_path)
    server.queue(Reply([BAD_CALL[name]]), stream(TEXT[name]))
    result = await session.turn("read it")
    assert result.reply == "The README says: # Demo"
    assert result.stop_reason == "end_turn"
    content, is_error = tool_result(name, server.requests[1].json)
    result = json.loads(content)
    assert result["ok"] is False
    assert result["error"].startswith("invalid JSON in tool arguments: Unterminated string")
    assert result["error"].endswith(': {"path": "READ')
    assert is_error in (True, None) and (name != "anthropic" or is_error)
    assert out.of("result")[0] == result


@pytest.mark.parametrize("name", ["anthropic", "openai", "ollama"])
async def test_cancel_closes_the_stream_at_once(name, server, monkeypatch, tmp_path):
    session, out = session_for(name, server, monkeypatch, tmp_path)
    server.queue(Reply([FIRST[name], Hang()]))
    task = asyncio.create_task(session.turn("hi"))
    await asyncio.wait_for(out.streaming.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as cancelled:
        await task
    assert await asyncio.to_thread(server.disconnected.wait, 10)
    assert cancelled.value.result.stop_reason == "cancelled"  # agent.TurnCancelled
    assert session.conversation[-1] == {"role": "assistant", "content": "Let me look.[cancelled]"}
    assert out.of("saying") == ["Let me look."]
    assert len(server.requests) == 1
