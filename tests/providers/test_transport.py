"""The providers' HTTP path (httpx's own transport, providers/http.py) against hostile
servers on 127.0.0.1: every malformed, endless, stalled or cut answer ends the turn with
a clear error (a stream that broke off, retried like one), bounded in bytes and time,
never a hang; TLS trusts what httpx trusts; a proxy in the environment is used."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from elelem_daemon.base.errors import ProviderError
from elelem_daemon.providers.http import build_client
from elelem_daemon.providers.openai import OpenAIProvider


@pytest.fixture(autouse=True)
def scripted_streams_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a cap set, a model named and `auto`, the openai provider's request waits for
    nothing the server says of itself (providers/served.py), and its lookup beside the
    turn is turned off here: these servers script the stream alone."""
    monkeypatch.setenv("OPENAI_MAX_TOKENS", "64")
    monkeypatch.setattr(OpenAIProvider, "look_up", lambda self: None)


Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]
OK_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
CHUNKED = OK_HEAD + b"transfer-encoding: chunked\r\n\r\n"
SSE = [
    b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n',
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    b"data: [DONE]\n\n",
]
BOUND = 60  # seconds: a hang fails the test, not the run
HI = [{"role": "user", "content": "hi"}]


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class Hostile:
    """A raw server: each connection's requests are read, then `script(reader, writer,
    n)` answers (n counts requests from 0); `connections` counts connections, `closed`
    is set when a client goes away while the script waits for it."""

    def __init__(self, script: Script) -> None:
        self.script, self.requests, self.connections = script, 0, 0
        self.heads: list[bytes] = []
        self.closed = asyncio.Event()

    async def __aenter__(self) -> Hostile:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.heads.append(head)
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                n, self.requests = self.requests, self.requests + 1
                await self.script(reader, writer, n)
                if writer.is_closing():
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


def sends(*parts: bytes, close: bool = True) -> Script:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        for part in parts:
            writer.write(part)
            await writer.drain()
        if close:
            writer.close()

    return script


async def get(url: str, client: httpx.AsyncClient | None = None) -> bytes:
    client = client or build_client()
    try:
        async with asyncio.timeout(BOUND):
            async with client.stream("POST", url + "/x", content=b"{}") as response:
                return b"".join([piece async for piece in response.aiter_raw()])
    finally:
        await client.aclose()


def provider(url: str, retries: int = 0) -> OpenAIProvider:
    """A provider at `url` that records its waits instead of sleeping them."""
    chosen = OpenAIProvider("m", base_url=url + "/v1", api_key="k")
    chosen.retries = retries
    chosen.waits = []  # type: ignore[attr-defined]

    async def sleep(seconds: float) -> None:
        chosen.waits.append(seconds)  # type: ignore[attr-defined]

    chosen.sleep = sleep  # type: ignore[method-assign]
    return chosen


async def turn(chosen: OpenAIProvider) -> list[dict[str, Any]]:
    try:
        async with asyncio.timeout(BOUND):
            return [event async for event in chosen.fetch(HI, [])]
    finally:
        await chosen.aclose()


ENDED = "openai: the stream ended before finish_reason or [DONE]"


async def fails(script: Script, words: str = "") -> None:
    """The provider's turn against `script` ends in a stream that broke off (saying
    `words`, when given), retried like one; or, when httpx reads the answer leniently
    (`words` is ENDED), in the provider's own error for an answer that said nothing."""
    async with Hostile(script) as server:
        chosen = provider(server.url, retries=1)
        with pytest.raises(ProviderError) as caught:
            await turn(chosen)
        url = f"{server.url}/v1/chat/completions"
        if words == ENDED:
            assert str(caught.value) == ENDED
            return
        assert str(caught.value).startswith(f"openai: the stream from {url} broke off: ")
        assert words in str(caught.value)
        assert server.requests == 2 and len(chosen.waits) == 1  # type: ignore[attr-defined]


async def test_providers_get_httpx_own_client_with_the_settings(monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_CONNECT_TIMEOUT", "3")
    monkeypatch.setenv("ELELEM_READ_TIMEOUT", "7")
    chosen = OpenAIProvider("m", base_url="http://127.0.0.1:1/v1", api_key="k")
    client = await chosen.client_for("http://127.0.0.1:1/v1/chat/completions")
    assert type(client) is httpx.AsyncClient
    assert (client.timeout.connect, client.timeout.read, client.timeout.write) == (3, 7, 3)
    await chosen.aclose()


async def test_endless_headers_stop_at_a_bound() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(OK_HEAD)
        for _ in range(20000):  # 320 KB of headers, never ended: read only up to a bound
            writer.write(b"x-filler: 0123456\r\n")
            await writer.drain()

    await fails(script)


@pytest.mark.parametrize(
    "line",
    [b"HTTP/1.1 2000 OK", b"HTTP/2 200 OK", b"SSH-2.0-OpenSSH", b"HTTP/1.1 200 \x00bad"],
)
async def test_a_malformed_status_line(line: bytes) -> None:
    await fails(sends(line + b"\r\n\r\n"))


@pytest.mark.parametrize(
    ("field", "words"),
    [(b"no colon", ""), (b"bad name: x", ""),
     (b" folded: x", ENDED), (b"x: a\x01b", ENDED)],  # h11 takes these two: no body follows
)  # fmt: skip
async def test_a_malformed_header_line(field: bytes, words: str) -> None:
    await fails(sends(OK_HEAD + field + b"\r\n\r\n"), words)


async def test_an_endless_chunk_size_line() -> None:
    await fails(sends(CHUNKED + b"1" * 100_000))


@pytest.mark.parametrize(
    "size", [b"zz", b"-5", b"0x10", b"", b"1" * 17, b"+4", b"4 4", b"\xff"]
)  # fmt: skip
async def test_a_bad_chunk_size(size: bytes) -> None:
    await fails(sends(CHUNKED + size + b"\r\nabcd\r\n0\r\n\r\n"))


async def test_a_chunk_not_ended_by_crlf() -> None:
    await fails(sends(CHUNKED + b"4\r\nabcdXY0\r\n\r\n"))


@pytest.mark.parametrize(
    "length", [b"-1", b"abc", b"1" * 30, b"1e3", b"5, 6", b""]
)  # fmt: skip
async def test_a_bad_content_length(length: bytes) -> None:
    await fails(sends(OK_HEAD + b"content-length: " + length + b"\r\n\r\nabcde"))


async def test_two_content_lengths_that_disagree() -> None:
    await fails(sends(OK_HEAD + b"content-length: 5\r\ncontent-length: 6\r\n\r\nabcdef"))


async def test_an_unsupported_transfer_encoding() -> None:
    await fails(sends(OK_HEAD + b"transfer-encoding: gzip, chunked\r\n\r\n"))


async def test_a_body_shorter_than_its_length() -> None:
    await fails(sends(OK_HEAD + b"content-length: 10\r\n\r\nabc"), "received 3 bytes, expected 10")


async def test_a_connection_closed_mid_chunk() -> None:
    await fails(sends(CHUNKED + b"10\r\nabc"), "incomplete chunked read")


async def test_no_answer_at_all() -> None:
    await fails(sends(), "Server disconnected without sending a response")


async def test_endless_trailers_stop_at_a_bound() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(CHUNKED + b"0\r\n")
        for _ in range(20000):
            writer.write(b"x-trailer: 0123456\r\n")
            await writer.drain()

    await fails(script)


async def test_an_endless_trailer_line() -> None:
    await fails(sends(CHUNKED + b"0\r\nx-t: " + b"a" * 100_000))


async def test_a_head_a_byte_at_a_time_is_read_whole() -> None:
    head = CHUNKED.replace(b"\r\n\r\n", b"\r\n" + b"x-pad: 0123456789\r\n" * 90 + b"\r\n")

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        for i in range(len(head)):
            writer.write(head[i : i + 1])
            await writer.drain()
        writer.write(chunk(b"ok") + b"0\r\n\r\n")
        await writer.drain()

    async with Hostile(script) as server:
        assert await get(server.url) == b"ok"


async def test_a_large_request_arrives_whole() -> None:
    got: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        got.append(await reader.readexactly(length))
        writer.write(CHUNKED + b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    body = bytes(range(256)) * 20000  # 5 MB
    client = build_client()
    response = await client.post(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/x",
                                 content=body)  # fmt: skip
    assert response.status_code == 200 and got == [body]
    await client.aclose()
    server.close()


async def test_an_answer_of_one_chunk_per_byte_and_trailers_reads_whole() -> None:
    body = b"".join(chunk(part) for part in SSE) + b"0\r\nx-t: 1\r\n\r\n"

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(CHUNKED)
        for i in range(len(body)):
            writer.write(body[i : i + 1])
            await writer.drain()

    async with Hostile(script) as server:
        assert await get(server.url) == b"".join(SSE)
        assert {"type": "saying", "text": "Hi"} in await turn(provider(server.url))


async def test_a_body_past_the_reply_bound_ends_the_turn(monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_MAX_REPLY", "100000")

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(OK_HEAD + b"content-length: 999999999999\r\n\r\n")
        for _ in range(10000):
            writer.write(b": keepalive comment, endlessly\n")
            await writer.drain()

    async with Hostile(script) as server:
        with pytest.raises(ProviderError, match=r"passed 100000 bytes \(ELELEM_MAX_REPLY\)"):
            await turn(provider(server.url))


async def test_a_stall_before_the_head_is_a_read_timeout(monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_READ_TIMEOUT", "0.3")

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await reader.read()  # nothing, until the client goes away

    async with Hostile(script) as server:
        url = f"{server.url}/v1/chat/completions"
        with pytest.raises(ProviderError) as caught:
            await turn(provider(server.url))
        assert str(caught.value) == f"openai: {url} sent nothing for 0.3 s (ELELEM_READ_TIMEOUT)"


async def test_a_stall_mid_stream_is_a_read_timeout(monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_READ_TIMEOUT", "0.3")

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(CHUNKED + chunk(SSE[0]))
        await writer.drain()
        await reader.read()  # then nothing, until the client goes away

    async with Hostile(script) as server:
        url = f"{server.url}/v1/chat/completions"
        with pytest.raises(ProviderError) as caught:
            await turn(provider(server.url, retries=2))
        assert str(caught.value) == f"openai: {url} sent nothing for 0.3 s (ELELEM_READ_TIMEOUT)"
        assert server.requests == 1  # something was said: never retried


async def test_a_stream_cut_mid_chunk_is_retried() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        if n == 0:
            writer.write(CHUNKED + b'40\r\ndata: {"cho')
            writer.close()
            return
        writer.write(CHUNKED + b"".join(chunk(part) for part in SSE) + b"0\r\n\r\n")
        await writer.drain()

    async with Hostile(script) as server:
        chosen = provider(server.url, retries=2)
        events = await turn(chosen)
        assert {"type": "saying", "text": "Hi"} in events
        assert server.requests == 2 and len(chosen.waits) == 1  # type: ignore[attr-defined]


async def test_connections_are_kept_alive_and_a_closed_idle_one_is_replaced() -> None:
    good = CHUNKED + chunk(b"hello") + b"0\r\n\r\n"

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(good)
        await writer.drain()
        if n == 1:
            writer.close()  # after the answer: the kept connection is dead when reused

    client = build_client()
    async with Hostile(script) as server:
        for _ in range(3):
            async with client.stream("POST", server.url + "/x", content=b"{}") as response:
                assert await response.aread() == b"hello"
            await asyncio.sleep(0.05)
        assert server.requests == 3 and server.connections == 2
    await client.aclose()


async def test_a_kept_connection_dropped_at_the_next_request_is_retried() -> None:
    """httpx does not send a POST again by itself: the provider's retry does (one wait)."""
    good = CHUNKED + b"".join(chunk(part) for part in SSE) + b"0\r\n\r\n"

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        if n == 1:
            writer.close()  # read the request, answer nothing: as a server's idle timeout
            return
        writer.write(good)
        await writer.drain()

    async with Hostile(script) as server:
        chosen = provider(server.url, retries=2)
        for _ in range(2):
            async with asyncio.timeout(BOUND):
                events = [event async for event in chosen.fetch(HI, [])]
            assert {"type": "saying", "text": "Hi"} in events
        await chosen.aclose()
        assert server.requests == 3 and len(chosen.waits) == 1  # type: ignore[attr-defined]


async def test_cancelling_a_turn_closes_the_connection() -> None:
    hostile: Hostile

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(CHUNKED + chunk(SSE[0]))
        await writer.drain()
        await reader.read()  # until the client goes away
        hostile.closed.set()

    async with Hostile(script) as hostile:
        started = asyncio.Event()
        chosen = provider(hostile.url)

        async def read() -> None:
            async for _ in chosen.fetch(HI, []):
                started.set()

        task = asyncio.create_task(read())
        await asyncio.wait_for(started.wait(), BOUND)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(hostile.closed.wait(), BOUND)
        await chosen.aclose()


async def test_a_header_with_a_line_break_is_refused() -> None:
    async with Hostile(sends(CHUNKED + b"0\r\n\r\n")) as server:
        client = build_client()
        with pytest.raises(httpx.LocalProtocolError):
            await client.post(server.url, headers={"authorization": "Bearer k\r\nx-evil: 1"})
        await client.aclose()
        assert server.requests == 0


async def test_a_refused_connection_says_so() -> None:
    async with Hostile(sends()) as server:
        url = server.url
    with pytest.raises(ProviderError, match="cannot connect to .*: Connection refused"):
        await turn(provider(url))


# -- TLS ------------------------------------------------------------------------------
@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


async def tls_server(cert: tuple[Path, Path]) -> AsyncIterator[asyncio.Server]:
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert[0]), str(cert[1]))
    body = CHUNKED + b"".join(chunk(part) for part in SSE) + b"0\r\n\r\n"
    server = await asyncio.start_server(
        Hostile(sends(body, close=False)).serve, "127.0.0.1", 0, ssl=context
    )
    yield server
    server.close()


async def test_tls_to_a_self_signed_server_fails_clearly(certificate, monkeypatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    async for server in tls_server(certificate):
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(ProviderError) as caught:
            await turn(provider(f"https://127.0.0.1:{port}"))
        assert str(caught.value).startswith(
            f"openai: cannot connect to https://127.0.0.1:{port}/v1/chat/completions: "
        )
        assert "certificate verify failed" in str(caught.value)


async def test_tls_with_the_certificate_trusted_by_ssl_cert_file(certificate, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # as httpx trusts it
    async for server in tls_server(certificate):
        port = server.sockets[0].getsockname()[1]
        events = await turn(provider(f"https://127.0.0.1:{port}"))
        assert {"type": "saying", "text": "Hi"} in events


# -- proxies ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["HTTP_PROXY", "https_proxy", "ALL_PROXY"])
async def test_a_proxy_in_the_environment_is_used(name, monkeypatch) -> None:
    for other in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(other, raising=False)
        monkeypatch.delenv(other.lower(), raising=False)
    async with Hostile(sends(CHUNKED + chunk(b"via proxy") + b"0\r\n\r\n")) as proxy:
        monkeypatch.setenv(name, proxy.url)
        client = build_client()
        if name != "https_proxy":  # a plain request goes through the proxy, absolute-form
            async with client.stream("POST", "http://example.invalid/v1/x", content=b"{}") as r:
                assert await r.aread() == b"via proxy"
            assert proxy.heads[0].startswith(b"POST http://example.invalid/v1/x HTTP/1.1")
        await client.aclose()
    assert os.environ.get(name) == proxy.url


async def test_an_answer_before_the_request_was_all_sent_is_read() -> None:
    answer = b'{"error": {"message": "too large"}}'

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")  # the head only: answer at once
        writer.write(
            b"HTTP/1.1 413 Too Large\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (len(answer), answer)
        )
        await writer.drain()
        while await reader.read(1 << 20):  # then drain the rest and close (a lingering close,
            pass  # as nginx's: a close with the body unread would reset the answer away)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    provider = OpenAIProvider("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k")
    big = [{"role": "user", "content": "x" * 20_000_000}]
    with pytest.raises(ProviderError, match="^openai 413: too large$"):
        async for _ in provider.fetch(big, []):
            pass
    await provider.aclose()
    server.close()
