"""Every failure becomes one clear error naming the provider and, where it applies, the URL."""

from __future__ import annotations

import socket

import pytest

from .conftest import PROMPT, README_TOOL, make, stream
from .replay import Cut, Reply, Sleep, json_reply
from .samples import ALL, ERROR_BODY, ERROR_TEXT, FIRST, PATH, failure, free_port


@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_non_2xx_names_provider_status_and_message(provider, server):
    status, payload = ERROR_BODY[provider.name]
    server.queue(json_reply(status, payload))
    assert await failure(provider) == ([], ERROR_TEXT[provider.name])
    assert len(server.requests) == 1  # not retried


@pytest.mark.parametrize("name", ALL)
async def test_turn_ends_with_error_reply(name, server, monkeypatch, tmp_path):
    from .conftest import session_for

    session, out = session_for(name, server, monkeypatch, tmp_path)
    status, payload = ERROR_BODY[name]
    server.queue(json_reply(status, payload))
    result = await session.turn("hi")
    reply = result.reply
    assert reply == f"Error: {ERROR_TEXT[name]}"
    assert result.stop_reason == "error"
    assert session.conversation[-1] == {"role": "assistant", "content": reply}
    assert ("say", (ERROR_TEXT[name], "error")) in out.events


@pytest.mark.parametrize("provider", ["openai"], indirect=True)
async def test_body_that_is_not_json_is_quoted(provider, server):
    server.queue(Reply([b"<html>Bad gateway</html>"], 404, content_type="text/html"))
    server.queue(Reply([], 404))
    assert await failure(provider) == ([], "openai 404: <html>Bad gateway</html>")
    assert await failure(provider) == ([], "openai 404: Not Found")


@pytest.mark.parametrize("name", ALL)
async def test_refused_connection_names_the_url_after_retries(name, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}"
    provider = make(name, url, monkeypatch)
    events, text = await failure(provider)
    assert text.startswith(f"{name}: cannot connect to {url}{PATH[name]}: ")
    assert "Connection refused" in text or "Errno 111" in text
    if name == "ollama":
        assert text.endswith("(is Ollama running? Start it with: ollama serve)")
    assert len(provider.waits) == 2  # ELELEM_RETRIES default


async def test_connect_timeout_names_the_url(monkeypatch):
    monkeypatch.setenv("ELELEM_CONNECT_TIMEOUT", "0.3")
    monkeypatch.setenv("ELELEM_RETRIES", "0")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)  # never accepts: once the backlog is full, connecting hangs
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        try:
            filler.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(filler)
    try:
        provider = make("openai", f"http://127.0.0.1:{port}", monkeypatch)
        _, text = await failure(provider)
    finally:
        for s in [listener, *fillers]:
            s.close()
    assert text == (
        f"openai: cannot connect to http://127.0.0.1:{port}/v1/chat/completions: "
        "no answer within 0.3 s (ELELEM_CONNECT_TIMEOUT)"
    )


@pytest.mark.parametrize("name", ALL)
async def test_read_timeout_names_the_url(name, server, monkeypatch):
    monkeypatch.setenv("ELELEM_READ_TIMEOUT", "0.3")
    provider = make(name, server.url, monkeypatch)
    server.queue(Reply([FIRST[name], Sleep(10)]))
    events, text = await failure(provider)
    assert events == [{"type": "saying", "text": "Let me look."}]
    assert text == f"{name}: {server.url}{PATH[name]} sent nothing for 0.3 s (ELELEM_READ_TIMEOUT)"


@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_cut_stream_after_an_event(provider, server):
    server.queue(Reply([FIRST[provider.name], Cut()]))
    events, text = await failure(provider)
    assert events == [{"type": "saying", "text": "Let me look."}]
    assert text.startswith(
        f"{provider.name}: the stream from {server.url}{PATH[provider.name]} broke off: "
    )
    assert len(server.requests) == 1


ENDED = {
    "anthropic": "anthropic: the stream ended before message_stop",
    "openai": "openai: the stream ended before finish_reason or [DONE]",
    "ollama": 'ollama: the stream ended before "done": true',
}


@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_stream_that_ends_early(provider, server):
    """Closed cleanly (no length, connection: close) but without the API's last word."""
    server.queue(Reply([FIRST[provider.name]], chunked=False))
    assert await failure(provider) == (
        [{"type": "saying", "text": "Let me look."}],
        ENDED[provider.name],
    )


MALFORMED = {
    "anthropic": (
        b'event: content_block_delta\ndata: {"type":"content_block_delta",\n\n',
        'anthropic: malformed stream data: \'{"type":"content_block_delta",\'',
    ),
    "openai": (b"data: {not json}\n\n", "openai: malformed stream data: '{not json}'"),
    "ollama": (
        b'{"message":{"content":\n',
        'ollama: malformed NDJSON line: \'{"message":{"content":\'',
    ),
}


@pytest.mark.parametrize("provider", ALL, indirect=True)
async def test_malformed_line(provider, server):
    data, text = MALFORMED[provider.name]
    server.queue(Reply([FIRST[provider.name], data]))
    assert await failure(provider) == ([{"type": "saying", "text": "Let me look."}], text)


MID_STREAM = {
    "openai": (
        b'data: {"error":{"message":"upstream overloaded","code":502}}\n\n',
        "openai: upstream overloaded",
    ),
    "ollama": (
        b'{"error":"an error was encountered while running the model"}\n',
        "ollama: an error was encountered while running the model",
    ),
}


@pytest.mark.parametrize("provider", ["openai", "ollama"], indirect=True)
async def test_error_inside_the_stream(provider, server):
    data, text = MID_STREAM[provider.name]
    server.queue(Reply([FIRST[provider.name], data]))
    assert await failure(provider) == ([{"type": "saying", "text": "Let me look."}], text)


@pytest.mark.parametrize("provider", ["openai"], indirect=True)
async def test_openrouter_finish_reason_error(provider, server):
    data = (
        b'data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}],'
        b'"error":{"code":502,"message":"Provider returned error"}}\n\n'
    )
    server.queue(Reply([FIRST["openai"], data]))
    assert (await failure(provider))[1] == "openai: Provider returned error"


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
async def test_unexpected_shape_is_an_error_not_a_crash(provider, server):
    data = (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":7,'
        b'"delta":{"type":"text_delta","text":"x"}}\n\n'
    )
    server.queue(Reply([FIRST["anthropic"], data]))
    _, text = await failure(provider)
    assert text == "anthropic: unexpected stream data (KeyError: 7)"


async def test_unknown_host_names_the_url(monkeypatch):
    """DNS failure text (built from the resolver's error as httpx wraps it; no DNS in tests)."""
    import httpx

    provider = make("openai", "http://no-such-host.invalid", monkeypatch)
    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except OSError as cause:
            raise httpx.ConnectError("[Errno -2] Name or service not known") from cause
    except httpx.ConnectError as exc:
        failure = provider.transport_failure(exc, "http://no-such-host.invalid/v1/chat/completions")
    assert str(failure) == (
        "openai: cannot connect to http://no-such-host.invalid/v1/chat/completions: "
        "Name or service not known"
    )
    assert failure.retryable


@pytest.mark.parametrize(
    "name, body, warning",
    [
        (
            "anthropic",
            b'event: message_delta\ndata: {"type":"message_delta","delta":'
            b'{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}\n\n'
            b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
            "anthropic: the reply hit max_tokens (ANTHROPIC_MAX_TOKENS)",
        ),
        (
            "openai",
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\n',
            "openai: the reply hit the model's token limit",
        ),
    ],
)
async def test_a_reply_cut_by_the_token_limit_is_reported_and_logged(
    name, body, warning, server, monkeypatch, caplog
):
    import logging

    caplog.set_level(logging.INFO, logger="elelem_daemon")
    provider = make(name, server.url, monkeypatch)
    server.queue(Reply([FIRST[name], body]))
    events = [e async for e in provider.fetch(PROMPT, [README_TOOL])]
    assert events[0] == {"type": "saying", "text": "Let me look."}
    assert {"type": "stop", "reason": "max_tokens"} in events
    assert warning in caplog.text


async def test_injected_client(server):
    import httpx

    from elelem_daemon.providers.openai import OpenAIProvider

    client = httpx.AsyncClient(timeout=httpx.Timeout(5.0))
    provider = OpenAIProvider(model="m", client=client, base_url=f"{server.url}/v1")
    assert provider.client is client
    server.queue(stream("openai_text.sse"))
    assert [e["type"] async for e in provider.fetch(PROMPT, [])] == ["saying", "saying", "usage"]
    assert "tools" not in server.requests[0].json and "tool_choice" not in server.requests[0].json
    await provider.aclose()
    assert client.is_closed


@pytest.mark.parametrize("provider", ["openai"], indirect=True)
async def test_long_multi_line_error_is_one_clipped_line(provider, server):
    message = "7 validation errors:\n" + "\n".join(f"  {{'loc': {n}}}" for n in range(40))
    server.queue(json_reply(400, {"error": {"message": message}}))
    _, text = await failure(provider)
    assert "\n" not in text
    assert text.startswith("openai 400: 7 validation errors: {'loc': 0} {'loc': 1}")
    assert text.endswith("...") and len(text) == len("openai 400: ") + 303
