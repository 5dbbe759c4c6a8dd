"""One HTTP client per provider endpoint, shared by sessions (providers/clients.py), no
TLS set-up for plain http, and a server's self-description asked beside the first
request, never before it (providers/openai.py)."""

from __future__ import annotations

import asyncio
import json
import ssl
import threading

from elelem_daemon.faces.daemon import live
from elelem_daemon.providers import clients

from .conftest import session_for, stream
from .replay import Gate, Reply

SERVED = "SmolLM2-135M-Instruct.Q4_1"


def models_reply(gate: threading.Event | None = None) -> Reply:
    body = json.dumps({"data": [{"id": SERVED, "owned_by": "llamacpp"}]}).encode()
    return Reply([Gate(gate), body] if gate else [body], 200, {}, "application/json")


async def test_two_sessions_share_one_client_per_endpoint(server, monkeypatch, tmp_path):
    server.routes["/v1/models"] = models_reply()
    first, _ = session_for("openai", server, monkeypatch, tmp_path)
    second, _ = session_for("openai", server, monkeypatch, tmp_path)
    server.queue(stream("openai_text.sse"), stream("openai_text.sse"))
    await first.turn("hi")
    await second.turn("hi")
    url = f"{server.url}/v1/chat/completions"
    made = await first.provider.client_for(url)
    assert made is await second.provider.client_for(url)
    assert clients.count() == 1  # the lookups and both turns: one client
    await first.close()  # a session's end leaves the shared client to the other
    assert not made.is_closed
    server.queue(stream("openai_text.sse"))
    assert (await second.turn("again")).reply == "The README says: # Demo"
    await second.close()


async def test_a_plain_http_endpoint_loads_no_certificates(server, monkeypatch, tmp_path):
    loaded: list[object] = []
    real = ssl.SSLContext.load_verify_locations

    def load(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        loaded.append(args or kwargs)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", load)
    session, _ = session_for("openai", server, monkeypatch, tmp_path)
    server.queue(stream("openai_text.sse"))
    await session.turn("hi")
    await session.provider.server()
    assert loaded == []
    await session.close()


async def test_the_first_request_does_not_wait_for_the_model_list(server, monkeypatch, tmp_path):
    gate = threading.Event()
    server.routes["/v1/models"] = models_reply(gate)  # answers only when the gate opens
    session, _ = session_for("openai", server, monkeypatch, tmp_path)  # no model chosen
    server.queue(stream("openai_text.sse"), stream("openai_text.sse"))
    try:
        async with asyncio.timeout(20):  # generous: a wait for the list would be 30 s
            result = await session.turn("hi")
    finally:
        gate.set()
    assert result.reply == "The README says: # Demo"
    # sent before the list came (a wait would have sent gpt-4o after LOOKUP_TIMEOUT)
    assert "model" not in server.requests[0].json  # not known yet: the server's own
    served = await session.provider.server()
    assert served.models == [SERVED] and session.provider.model == SERVED
    await session.turn("again")
    assert server.requests[1].json["model"] == SERVED
    assert [r.path for r in server.gets] == ["/props", "/v1/models"]  # once
    await session.close()


async def test_the_served_model_is_named_once_known(server, monkeypatch, tmp_path):
    server.routes["/v1/models"] = models_reply()
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4o")  # asked for; a llama.cpp server has its own
    session, _ = session_for("openai", server, monkeypatch, tmp_path)
    await session.provider.server()  # begun with the session; no turn yet
    # the name the server gave, for every face: the daemon's session info and event/usage
    assert live.served(session) == {"servedModel": SERVED}
    assert f"model: {SERVED} (asked for gpt-4o)" in (await session.command("/model")).output
    assert f"model: {SERVED} (served)" in (await session.command("/cost")).output
    await session.close()


async def test_plain_http_through_an_https_proxy_checks_the_proxy(monkeypatch):
    loaded: list[object] = []
    real = ssl.SSLContext.load_verify_locations

    def load(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        loaded.append(args or kwargs)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", load)
    monkeypatch.setenv("HTTP_PROXY", "https://proxy.invalid:3128")
    from elelem_daemon.providers.http import timeouts

    await clients.shared("http://127.0.0.1:9/v1/models", timeouts())
    assert loaded  # the proxy's certificate is checked: TLS set up as usual
