"""The lean transport (providers/transport.py, wire.py) against hostile servers on
127.0.0.1: every malformed or endless answer is a clear error (a stream that broke
off, retried like one), bounded in bytes and time; TLS trusts what httpx trusts; a proxy
in the environment gets httpx's own transport."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from elelem_daemon.base.errors import ProviderError
from elelem_daemon.providers.http import build_client
from elelem_daemon.providers.openai import OpenAIProvider
from elelem_daemon.providers.transport import LeanTransport
from elelem_daemon.providers.wire import MAX_HEAD, Chunked, ProtocolError

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]
OK_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
CHUNKED = OK_HEAD + b"transfer-encoding: chunked\r\n\r\n"
SSE = [
    b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n',
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    b"data: [DONE]\n\n",
]


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
        async with client.stream("POST", url + "/x", content=b"{}") as response:
            return b"".join([piece async for piece in response.aiter_raw()])
    finally:
        if client is not None:
            await client.aclose()


async def fails(script: Script, words: str) -> None:
    async with Hostile(script) as server:
        with pytest.raises(httpx.RemoteProtocolError, match=words):
            await get(server.url)


async def test_the_lean_transport_is_what_providers_get() -> None:
    provider = OpenAIProvider("m", base_url="http://127.0.0.1:1/v1", api_key="k")
    assert isinstance(provider.client._transport, LeanTransport)
    await provider.aclose()


async def test_endless_headers_stop_at_the_bound() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(OK_HEAD)
        for _ in range(20000):  # 320 KB of headers, never ended: read only past the bound
            writer.write(b"x-filler: 0123456\r\n")
            await writer.drain()

    await fails(script, f"head passed {MAX_HEAD} bytes")


async def test_too_many_header_fields() -> None:
    await fails(sends(OK_HEAD + b"x-a: b\r\n" * 101 + b"\r\n"), "more than 100 header fields")


@pytest.mark.parametrize(
    "line",
    [b"HTTP/1.1 2000 OK", b"HTTP/2 200 OK", b"SSH-2.0-OpenSSH", b"HTTP/1.1 200 \x00bad"],
)
async def test_a_malformed_status_line(line: bytes) -> None:
    await fails(sends(line + b"\r\n\r\n"), "malformed status line")


@pytest.mark.parametrize("field", [b" folded: x", b"no colon", b"bad name: x", b"x: a\x01b"])
async def test_a_malformed_header_line(field: bytes) -> None:
    await fails(sends(OK_HEAD + field + b"\r\n\r\n"), "malformed header line")


async def test_an_endless_chunk_size_line() -> None:
    await fails(sends(CHUNKED + b"1" * 100_000), "chunk-size line passed 1024 bytes")


@pytest.mark.parametrize(
    "size", [b"zz", b"-5", b"0x10", b"", b"1" * 17, b"+4", b"4 4", b"\xff"]
)  # fmt: skip
async def test_a_bad_chunk_size(size: bytes) -> None:
    await fails(sends(CHUNKED + size + b"\r\nabcd\r\n0\r\n\r\n"), "bad chunk size")


async def test_a_chunk_not_ended_by_crlf() -> None:
    await fails(sends(CHUNKED + b"4\r\nabcdXY0\r\n\r\n"), "did not end with CRLF")


@pytest.mark.parametrize(
    "length", [b"-1", b"abc", b"1" * 30, b"1e3", b"5, 6", b""]
)  # fmt: skip
async def test_a_bad_content_length(length: bytes) -> None:
    await fails(sends(OK_HEAD + b"content-length: " + length + b"\r\n\r\nabcde"), "content-length")


async def test_two_content_lengths_that_disagree() -> None:
    head = OK_HEAD + b"content-length: 5\r\ncontent-length: 6\r\n\r\nabcdef"
    await fails(sends(head), "bad content-length")


async def test_an_unsupported_transfer_encoding() -> None:
    head = OK_HEAD + b"transfer-encoding: gzip, chunked\r\n\r\n"
    await fails(sends(head), "unsupported transfer-encoding")


async def test_a_body_shorter_than_its_length() -> None:
    head = OK_HEAD + b"content-length: 10\r\n\r\nabc"
    await fails(sends(head), "received 3 bytes, expected 10")


async def test_a_connection_closed_mid_chunk() -> None:
    await fails(sends(CHUNKED + b"10\r\nabc"), "incomplete chunked read")


async def test_no_answer_at_all() -> None:
    await fails(sends(), "Server disconnected without sending a response")


async def test_endless_trailers_stop_at_the_bound() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(CHUNKED + b"0\r\n")
        for _ in range(20000):
            writer.write(b"x-trailer: 0123456\r\n")
            await writer.drain()

    await fails(script, "trailers passed")


async def test_an_endless_trailer_line() -> None:
    await fails(sends(CHUNKED + b"0\r\nx-t: " + b"a" * 100_000), "a trailer line passed 8192")


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
    body = bytes(range(256)) * 20000  # 5 MB: written in pieces, each within the timeout
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


def test_chunked_feed_at_every_split_is_the_same_body() -> None:
    body = b"".join(chunk(part) for part in SSE) + b"3;ext=1\r\nabc\r\n0\r\nx-t: 1\r\n\r\n"
    whole = b"".join(SSE) + b"abc"
    for cut in range(len(body) + 1):
        parser = Chunked()
        got = parser.feed(body[:cut]) + parser.feed(body[cut:])
        assert (got, parser.done, parser.extra) == (whole, True, False), cut
    parser = Chunked()
    assert parser.feed(body) == whole  # many chunks in one read: one piece
    with pytest.raises(ProtocolError):
        Chunked().feed(b"4\r\nabcd\n\n")


async def test_a_body_past_the_reply_bound_ends_the_turn(monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_MAX_REPLY", "100000")

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(OK_HEAD + b"content-length: 999999999999\r\n\r\n")
        for _ in range(10000):
            writer.write(b": keepalive comment, endlessly\n")
            await writer.drain()

    async with Hostile(script) as server:
        provider = OpenAIProvider("m", base_url=server.url + "/v1", api_key="k")
        with pytest.raises(ProviderError, match=r"passed 100000 bytes \(ELELEM_MAX_REPLY\)"):
            async for _ in provider.fetch([{"role": "user", "content": "hi"}], []):
                pass
        await provider.aclose()


async def test_a_stall_before_the_head_is_a_read_timeout(monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_READ_TIMEOUT", "0.3")

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await reader.read()  # nothing, until the client goes away

    async with Hostile(script) as server:
        provider = OpenAIProvider("m", base_url=server.url + "/v1", api_key="k")
        url = f"{server.url}/v1/chat/completions"
        with pytest.raises(ProviderError) as caught:
            async for _ in provider.fetch([{"role": "user", "content": "hi"}], []):
                pass
        assert str(caught.value) == f"openai: {url} sent nothing for 0.3 s (ELELEM_READ_TIMEOUT)"
        await provider.aclose()


async def test_a_stream_cut_mid_chunk_is_retried(monkeypatch) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        if n == 0:
            writer.write(CHUNKED + b'40\r\ndata: {"cho')
            writer.close()
            return
        writer.write(CHUNKED + b"".join(chunk(part) for part in SSE) + b"0\r\n\r\n")
        await writer.drain()

    async with Hostile(script) as server:
        provider = OpenAIProvider("m", base_url=server.url + "/v1", api_key="k")
        waits: list[float] = []

        async def sleep(seconds: float) -> None:
            waits.append(seconds)

        provider.sleep = sleep  # type: ignore[method-assign]
        events = [e async for e in provider.fetch([{"role": "user", "content": "hi"}], [])]
        assert {"type": "saying", "text": "Hi"} in events
        assert server.requests == 2 and len(waits) == 1
        await provider.aclose()


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


async def test_a_kept_connection_dropped_at_the_next_request_is_tried_once_afresh() -> None:
    good = CHUNKED + chunk(b"hello") + b"0\r\n\r\n"

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        if n == 1:
            writer.close()  # read the request, answer nothing: as a server's idle timeout
            return
        writer.write(good)
        await writer.drain()

    client = build_client()
    async with Hostile(script) as server:
        for _ in range(2):
            async with client.stream("POST", server.url + "/x", content=b"{}") as response:
                assert await response.aread() == b"hello"
        assert server.requests == 3 and server.connections == 2
    await client.aclose()


async def test_cancelling_a_read_closes_the_connection() -> None:
    hostile: Hostile

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(CHUNKED + chunk(b"data: x\n\n"))
        await writer.drain()
        await reader.read()  # until the client goes away
        hostile.closed.set()

    async with Hostile(script) as hostile:
        started = asyncio.Event()

        async def read() -> None:
            async with build_client().stream("POST", hostile.url + "/x", content=b"") as r:
                async for _ in r.aiter_raw():
                    started.set()

        task = asyncio.create_task(read())
        await asyncio.wait_for(started.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(hostile.closed.wait(), 10)


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
    provider = OpenAIProvider("m", base_url=url + "/v1", api_key="k")
    provider.retries = 0
    with pytest.raises(ProviderError, match="cannot connect to .*: Connection refused"):
        async for _ in provider.fetch([{"role": "user", "content": "hi"}], []):
            pass
    await provider.aclose()


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
        provider = OpenAIProvider("m", base_url=f"https://127.0.0.1:{port}/v1", api_key="k")
        provider.retries = 0
        with pytest.raises(ProviderError) as caught:
            async for _ in provider.fetch([{"role": "user", "content": "hi"}], []):
                pass
        assert str(caught.value).startswith(
            f"openai: cannot connect to https://127.0.0.1:{port}/v1/chat/completions: "
        )
        assert "certificate verify failed" in str(caught.value)
        await provider.aclose()


async def test_tls_with_the_certificate_trusted_by_ssl_cert_file(certificate, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # as httpx trusts it
    async for server in tls_server(certificate):
        port = server.sockets[0].getsockname()[1]
        provider = OpenAIProvider("m", base_url=f"https://127.0.0.1:{port}/v1", api_key="k")
        assert isinstance(provider.client._transport, LeanTransport)
        events = [e async for e in provider.fetch([{"role": "user", "content": "hi"}], [])]
        assert {"type": "saying", "text": "Hi"} in events
        await provider.aclose()


# -- proxies ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["HTTP_PROXY", "https_proxy", "ALL_PROXY"])
async def test_a_proxy_in_the_environment_gets_httpx_own_transport(name, monkeypatch) -> None:
    for other in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(other, raising=False)
        monkeypatch.delenv(other.lower(), raising=False)
    async with Hostile(sends(CHUNKED + chunk(b"via proxy") + b"0\r\n\r\n")) as proxy:
        monkeypatch.setenv(name, proxy.url)
        client = build_client()
        assert not isinstance(client._transport, LeanTransport)
        if name != "https_proxy":  # a plain request goes through the proxy, absolute-form
            async with client.stream("POST", "http://example.invalid/v1/x", content=b"{}") as r:
                assert await r.aread() == b"via proxy"
            assert proxy.heads[0].startswith(b"POST http://example.invalid/v1/x HTTP/1.1")
        await client.aclose()
    assert os.environ.get(name) == proxy.url


async def test_a_body_of_unknown_length_goes_to_httpx_own_transport() -> None:
    async def upload() -> AsyncIterator[bytes]:
        yield b"{}"

    async with Hostile(sends(CHUNKED + chunk(b"fine") + b"0\r\n\r\n")) as server:
        client = build_client()
        response = await client.post(server.url + "/x", content=upload())
        assert response.content == b"fine"
        assert b"transfer-encoding: chunked" in server.heads[0].lower()
        assert client._transport._fallback is not None  # type: ignore[attr-defined]
        await client.aclose()


async def test_an_answer_before_the_request_was_all_sent_is_read() -> None:
    answer = b'{"error": {"message": "too large"}}'

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")  # the head only: answer, close with the body unread
        writer.write(
            b"HTTP/1.1 413 Too Large\r\ncontent-length: %d\r\n\r\n%s" % (len(answer), answer)
        )
        await writer.drain()
        await asyncio.sleep(0.3)
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
