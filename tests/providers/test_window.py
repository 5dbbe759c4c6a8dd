"""Context windows: each provider asks its API's metadata (replayed on 127.0.0.1), else the
setting, else the table; once, bounded, and a failure is just "unknown"."""

from __future__ import annotations

import asyncio

import pytest

from elelem_daemon.providers import window

from .conftest import REGISTRY, point
from .replay import Hang, ReplayServer, Reply, json_reply


def build(name: str, server: ReplayServer, monkeypatch: pytest.MonkeyPatch, **env: str):
    point(monkeypatch, name, server.url)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return REGISTRY.build_provider(name)


async def test_anthropic_reads_max_input_tokens(server, monkeypatch) -> None:
    provider = build("anthropic", server, monkeypatch, ANTHROPIC_MODEL="claude-next")
    server.routes["/v1/models/claude-next"] = json_reply(
        200, {"id": "claude-next", "type": "model", "max_input_tokens": 1_000_000}
    )
    assert await provider.context_window() == 1_000_000
    assert await provider.context_window() == 1_000_000  # cached: asked once
    (request,) = server.gets
    assert request.headers["anthropic-version"] and request.headers["x-api-key"]
    await provider.aclose()


async def test_openai_compatible_llama_cpp_props(server, monkeypatch) -> None:
    provider = build("openai", server, monkeypatch, OPENAI_MODEL="smol")
    server.routes["/props"] = json_reply(200, {"default_generation_settings": {"n_ctx": 4096}})
    assert await provider.context_window() == 4096
    assert [r.path for r in server.gets] == ["/props", "/v1/models"]  # both, once
    await provider.aclose()


@pytest.mark.parametrize("key", ["max_model_len", "context_length"])
async def test_openai_compatible_models_list(server, monkeypatch, key: str) -> None:
    provider = build("openai", server, monkeypatch, OPENAI_MODEL="qwen")
    listed = {"data": [{"id": "other", key: 1}, {"id": "qwen", key: 32768}]}
    server.routes["/v1/models"] = json_reply(200, listed)
    assert await provider.context_window() == 32768  # /props answered 404 first
    assert [r.path for r in server.gets] == ["/props", "/v1/models"]
    await provider.aclose()


async def test_ollama_show_parameters_then_model_info(server, monkeypatch) -> None:
    provider = build("ollama", server, monkeypatch, OLLAMA_MODEL="qwen3")
    server.queue(json_reply(200, {"parameters": 'stop "<x>"\nnum_ctx 8192', "model_info": {}}))
    assert await provider.context_window() == 8192
    assert server.requests[0].json == {"model": "qwen3"}
    other = build("ollama", server, monkeypatch, OLLAMA_MODEL="llama3")
    server.queue(json_reply(200, {"model_info": {"llama.context_length": 131072}}))
    assert await other.context_window() == 131072
    configured = build("ollama", server, monkeypatch, OLLAMA_NUM_CTX="2048")
    assert await configured.context_window() == 2048  # what every request asks for
    assert len(server.requests) == 2
    for built in (provider, other, configured):
        await built.aclose()


async def test_the_setting_wins_and_the_table_is_the_fallback(server, monkeypatch) -> None:
    configured = build("openai", server, monkeypatch, ELELEM_CONTEXT_WINDOW="12345")
    assert await configured.context_window() == 12345
    assert server.requests == []  # nothing asked
    monkeypatch.delenv("ELELEM_CONTEXT_WINDOW")
    unknown = build("openai", server, monkeypatch, OPENAI_MODEL="gpt-4o-mini")
    assert await unknown.context_window() == 128_000  # no metadata: the table
    nothing = build("openai", server, monkeypatch, OPENAI_MODEL="my-own-model")
    assert await nothing.context_window() is None
    for built in (configured, unknown, nothing):
        await built.aclose()


async def test_a_bad_setting_or_a_hanging_server_is_only_unknown(
    server, monkeypatch, caplog
) -> None:
    bad = build("openai", server, monkeypatch, ELELEM_CONTEXT_WINDOW="lots", OPENAI_MODEL="x")
    assert await bad.context_window() is None
    assert "ELELEM_CONTEXT_WINDOW must be a whole number" in caplog.text
    monkeypatch.delenv("ELELEM_CONTEXT_WINDOW")
    monkeypatch.setattr(window, "LOOKUP_TIMEOUT", 0.3)
    slow = build("ollama", server, monkeypatch, OLLAMA_MODEL="llama3")
    server.queue(Reply([Hang()], content_type="application/json"))
    assert await asyncio.wait_for(slow.context_window(), 10) is None
    for built in (bad, slow):
        await built.aclose()


def test_the_table_matches_prefixes_and_ignores_a_router_prefix() -> None:
    assert window.known("claude-sonnet-4-5") == 200_000
    assert window.known("openai/gpt-4.1-mini") == 1_047_576
    assert window.known("smollm2") is None and window.known(None) is None


async def test_a_huge_metadata_answer_is_not_read_whole(server, monkeypatch) -> None:
    from elelem_daemon.providers import http

    provider = build("openai", server, monkeypatch, OPENAI_MODEL="m")
    monkeypatch.setattr(http, "METADATA_BYTES", 1000)
    server.routes["/props"] = json_reply(200, {"n_ctx": 4096, "junk": "x" * 100_000})
    server.routes["/v1/models"] = json_reply(200, {"data": [{"id": "m", "context_length": 8192}]})
    assert await provider.context_window() == 8192  # /props was too big: refused, not read
    await provider.aclose()
