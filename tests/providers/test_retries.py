"""Retries: 429/5xx/529, refused connections and broken streams, only before any event."""

from __future__ import annotations

import pytest

from .conftest import make, stream
from .replay import Cut, Reply, json_reply
from .samples import ALL, FIRST, failure, provider_events


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
async def test_529_retried_after_retry_after(provider, server):
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    server.queue(json_reply(529, overloaded, {"retry-after": "3"}), stream("anthropic_text.sse"))
    events = await provider_events(provider)
    assert provider.waits == [3.0]
    assert [e["text"] for e in events if e["type"] == "saying"] == ["The README", " says: # Demo"]
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body


@pytest.mark.parametrize("provider", ["openai"], indirect=True)
async def test_429_retry_after_ms_and_http_date(provider, server):
    limited = {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}
    server.queue(
        json_reply(429, limited, {"retry-after-ms": "1500"}),
        json_reply(429, limited, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}),
        stream("openai_text.sse"),
    )
    await provider_events(provider)
    assert provider.waits == [1.5, 0.0]  # a date in the past means: now


@pytest.mark.parametrize("provider", ["ollama"], indirect=True)
async def test_backoff_is_exponential_capped_and_gives_up(provider, server):
    for _ in range(3):
        server.queue(json_reply(500, {"error": "boom"}))
    assert await failure(provider) == ([], "ollama 500: boom")
    assert len(server.requests) == 3
    first, second = provider.waits
    assert 0.5 <= first <= 1.0 and 1.0 <= second <= 2.0


@pytest.mark.parametrize("provider", ["openai"], indirect=True)
async def test_quota_is_not_retried(provider, server):
    quota = {
        "error": {
            "message": "You exceeded your current quota",
            "type": "insufficient_quota",
            "code": "insufficient_quota",
        }
    }
    server.queue(json_reply(429, quota))
    assert await failure(provider) == ([], "openai 429: You exceeded your current quota")
    assert provider.waits == []


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
async def test_spend_limit_is_not_retried(provider, server):
    spend = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Spend limit",
            "details": {"error_code": "enforced_spend_limit_reached"},
        },
    }
    server.queue(json_reply(429, spend))
    assert await failure(provider) == ([], "anthropic 429: Spend limit")


async def test_retry_after_beyond_the_cap_fails_at_once(server, monkeypatch):
    monkeypatch.setenv("ELELEM_RETRY_MAX_DELAY", "10")
    provider = make("openai", server.url, monkeypatch)
    server.queue(json_reply(503, {"error": {"message": "busy"}}, {"retry-after": "120"}))
    assert await failure(provider) == ([], "openai 503: busy (retry after 120 s)")
    assert provider.waits == []


async def test_retries_setting(server, monkeypatch):
    monkeypatch.setenv("ELELEM_RETRIES", "0")
    provider = make("openai", server.url, monkeypatch)
    server.queue(json_reply(503, {"error": {"message": "busy"}}))
    assert await failure(provider) == ([], "openai 503: busy")
    assert len(server.requests) == 1


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
async def test_stream_error_before_any_event_is_retried(provider, server):
    start = FIRST["anthropic"].split(b"\n\n")[0] + b"\n\n"
    error = (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
        b'"message":"Overloaded"}}\n\n'
    )
    server.queue(Reply([start, error]), stream("anthropic_text.sse"))
    events = await provider_events(provider)
    assert len(server.requests) == 2 and len(provider.waits) == 1
    assert events[0] == {"type": "saying", "text": "The README"}


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
async def test_stream_error_after_an_event_is_not_retried(provider, server):
    error = (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
        b'"message":"Overloaded"}}\n\n'
    )
    server.queue(Reply([FIRST["anthropic"], error]))
    events, text = await failure(provider)
    assert events == [{"type": "saying", "text": "Let me look."}]
    assert text == "anthropic overloaded_error: Overloaded"
    assert len(server.requests) == 1


@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_cut_stream_before_any_event_is_retried(provider, server):
    text_stream = {
        "anthropic": "anthropic_text.sse",
        "openai": "openai_text.sse",
        "ollama": "ollama_text.ndjson",
    }[provider.name]
    server.queue(Reply([Cut()]), stream(text_stream))
    events = await provider_events(provider)
    assert events[0] == {"type": "saying", "text": "The README"}
    assert len(server.requests) == 2
