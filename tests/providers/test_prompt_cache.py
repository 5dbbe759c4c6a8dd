"""Prompt caching as the providers send it, recorded by a fake server on 127.0.0.1:
Anthropic's `cache_control` breakpoints, OpenAI's `prompt_cache_key`, llama.cpp's
`cache_prompt`, the cache's counts read back, and requests that only grow at their end
while the editor's state changes before every turn (through the real daemon)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

from elelem_daemon.base.errors import ProviderError
from elelem_daemon.providers.openai import OpenAIProvider

from .conftest import CANARY, collect, make, stream
from .replay import Reply

pytestmark = pytest.mark.e2e

CACHED = {"type": "ephemeral"}


def anthropic_reply(text: str, usage: dict[str, int]) -> Reply:
    events = [
        {"type": "message_start", "message": {"id": "m", "role": "assistant", "usage": usage}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return Reply([body.encode()])


def openai_reply(text: str, usage: dict[str, Any] | None = None, **extra: Any) -> Reply:
    def chunk(data: dict[str, Any]) -> bytes:
        return (
            b"data: "
            + json.dumps({"id": "c", "object": "chat.completion.chunk", **data}).encode()
            + b"\n\n"
        )

    delta = {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}
    stop = {"index": 0, "delta": {}, "finish_reason": "stop"}
    steps = [chunk({"choices": [delta]}), chunk({"choices": [stop], **extra})]
    if usage is not None:
        steps.append(chunk({"choices": [], "usage": usage}))
    return Reply([*steps, b"data: [DONE]\n\n"])


def bare(value: Any) -> Any:
    """A body without its breakpoints: what the cache's prefix is made of."""
    if isinstance(value, dict):
        return {k: bare(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [bare(v) for v in value]
    return value


def breakpoints(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(breakpoints(v) for v in value.values())
    if isinstance(value, list):
        return sum(breakpoints(v) for v in value)
    return 0


def environ(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    env.update(ELELEM_PROVIDER="", **more)
    return env


def span(line: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 3}}


async def test_anthropic_marks_the_stable_prefix_and_the_growing_end_and_it_stays_put(
    server, tmp_path
):
    """Through `elelem daemon`: an editor/state update before every turn, and each
    request is the last one plus the new messages, up to its last breakpoint."""
    from elelem_daemon.jsonrpc.client import Client

    (tmp_path / "app.py").write_text("x = 1\n")
    counts = {"input_tokens": 20, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 80}
    server.queue(*[anthropic_reply(f"answer {n}", counts) for n in range(5)])
    env = environ(ANTHROPIC_API_KEY=CANARY, ANTHROPIC_BASE_URL=server.url)
    async with await Client.spawn(
        "daemon", "-p", "anthropic", env=env, cwd=str(tmp_path)
    ) as client:
        await client.initialize(editorState=True)
        sid = (await client.new_session(cwd=str(tmp_path)))["sessionId"]
        results, usage = [], []
        for n in range(5):
            await client.editor_state(sid, activeFile="app.py", visibleRanges=[span(n)])
            turn = await client.start_turn(sid, f"question {n}")
            async for message in turn.events():
                if message["method"] == "event/usage":
                    usage.append(message["params"])
            results.append(await asyncio.wait_for(turn.result(), 30))
    bodies = [r.json for r in server.requests if r.method == "POST"]
    assert len(bodies) == 5
    for body in bodies:
        assert body["system"][-1]["cache_control"] == CACHED  # tools + system
        assert body["tools"][-1]["cache_control"] == CACHED
        assert body["messages"][-1]["content"][-1]["cache_control"] == CACHED  # the end
        assert breakpoints(body) <= 4  # the API's limit
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert json.dumps(after["system"]) == json.dumps(before["system"])  # byte for byte
        assert json.dumps(after["tools"]) == json.dumps(before["tools"])
        assert bare(after["messages"][: len(before["messages"])]) == bare(before["messages"])
        # the end the last request marked is marked again: it is read from the cache
        end = len(before["messages"]) - 1
        assert after["messages"][end]["content"][-1]["cache_control"] == CACHED
    notes = [json.dumps(b["messages"][-1]) for b in bodies]
    assert all("<context-note>" in note and "app.py" in note for note in notes)
    assert "app.py" not in json.dumps(bodies[-1]["system"])  # never in the system prompt
    assert results[0]["usage"] == {
        "input_tokens": 1000,
        "output_tokens": 5,
        "cache_read_tokens": 900,
        "cache_write_tokens": 80,
    }
    assert len(usage) == 5  # one event/usage per turn, before its answer
    assert usage[-1]["cacheReadTokens"] == 900 and usage[-1]["cacheWriteTokens"] == 80
    assert usage[-1]["session"]["inputTokens"] == 5000
    assert usage[-1]["session"]["cacheReadTokens"] == 4500
    assert usage[-1]["compactAt"] == 0.85  # where a meter warns of auto-compaction
    # claude-opus-4-5: 20 x $5 + 900 x $0.50 + 80 x $6.25 + 5 x $25, per million, a turn
    assert usage[0]["cost"] == pytest.approx(0.001175)
    assert usage[-1]["session"]["cost"] == pytest.approx(5 * 0.001175)


@pytest.mark.parametrize(
    ("ttl", "mark"), [("1h", {"type": "ephemeral", "ttl": "1h"}), ("5m", CACHED), ("off", None)]
)
async def test_anthropic_cache_ttl_is_a_setting(server, monkeypatch, ttl, mark):
    monkeypatch.setenv("ANTHROPIC_CACHE_TTL", ttl)
    provider = make("anthropic", server.url, monkeypatch)
    server.queue(stream("anthropic_text.sse"))
    await collect(provider)
    body = server.requests[0].json
    if mark is None:
        assert breakpoints(body) == 0 and body["system"] == "You are a terminal coding agent."
    else:
        assert body["system"][0]["cache_control"] == mark
        assert body["messages"][-1]["content"][-1]["cache_control"] == mark


def test_a_bad_cache_ttl_says_what_it_takes(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("ANTHROPIC_CACHE_TTL", "forever")
    from elelem_daemon.providers.anthropic import AnthropicProvider

    with pytest.raises(ProviderError, match="ANTHROPIC_CACHE_TTL must be 5m, 1h or off"):
        AnthropicProvider()


async def test_openai_sends_the_session_as_prompt_cache_key_and_reads_cached_tokens(
    server, tmp_path
):
    from elelem_daemon.jsonrpc.client import Client

    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 1024},
    }
    server.queue(openai_reply("one", usage), openai_reply("two", usage))
    env = environ(OPENAI_BASE_URL=f"{server.url}/v1", OPENAI_MODEL="local")
    async with await Client.spawn("daemon", "-p", "openai", env=env, cwd=str(tmp_path)) as client:
        await client.initialize()
        sid = (await client.new_session(cwd=str(tmp_path)))["sessionId"]
        first = await asyncio.wait_for(client.turn(sid, "hi"), 30)
        await asyncio.wait_for(client.turn(sid, "again"), 30)
    bodies = [r.json for r in server.requests if r.method == "POST"]
    assert [b["prompt_cache_key"] for b in bodies] == [sid, sid]
    assert all(b["cache_prompt"] is True for b in bodies)  # a local server's KV cache
    assert first["usage"] == {"input_tokens": 1200, "output_tokens": 7, "cache_read_tokens": 1024}


def test_api_openai_com_gets_the_key_but_no_llama_cpp_field(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    provider = OpenAIProvider(base_url="https://api.openai.com/v1")
    provider.cache_key = "session-1"
    _, _, body = provider.request([{"role": "user", "content": "hi"}], [])
    assert body["prompt_cache_key"] == "session-1" and "cache_prompt" not in body
    monkeypatch.setenv("OPENAI_PROMPT_CACHE", "0")
    provider = OpenAIProvider(base_url="http://127.0.0.1:9/v1")
    provider.cache_key = "session-1"
    _, _, body = provider.request([{"role": "user", "content": "hi"}], [])
    assert "prompt_cache_key" not in body and "cache_prompt" not in body


async def test_llama_cpp_timings_give_the_cache_counts(server, monkeypatch):
    provider = make("openai", server.url, monkeypatch)
    timings = {"prompt_n": 12, "cache_n": 1488, "predicted_n": 4}
    server.queue(openai_reply("hi", None, timings=timings))
    events = await collect(provider)
    assert events[-1] == {
        "type": "usage",
        "input_tokens": 1500,
        "output_tokens": 4,
        "cache_read_tokens": 1488,
    }
    # with `usage` too, its counts win and the timings add the cache's share
    server.queue(
        openai_reply("hi", {"prompt_tokens": 1500, "completion_tokens": 4}, timings=timings)
    )
    events = await collect(provider)
    assert events[-1]["cache_read_tokens"] == 1488 and events[-1]["input_tokens"] == 1500


@pytest.mark.parametrize(
    "usage",
    [
        {
            "prompt_tokens": 10,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": -5},
        },
        {
            "prompt_tokens": 10,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": True},
        },
        {"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": "x"},
    ],
)
async def test_hostile_cache_counts_are_left_out(server, monkeypatch, usage):
    provider = make("openai", server.url, monkeypatch)
    server.queue(openai_reply("hi", usage))
    events = await collect(provider)
    assert events[-1] == {"type": "usage", "input_tokens": 10, "output_tokens": 1}


async def test_a_cached_count_past_the_prompt_is_capped(server, monkeypatch):
    provider = make("openai", server.url, monkeypatch)
    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 1,
        "prompt_tokens_details": {"cached_tokens": 99},
    }
    server.queue(openai_reply("hi", usage))
    events = await collect(provider)
    assert events[-1]["cache_read_tokens"] == 10
