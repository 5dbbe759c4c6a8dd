"""LeanTransport: the `httpx.AsyncBaseTransport` `http.build_client` installs, a lighter
HTTP/1.1 reader for the providers' streamed answers (issue 22).

httpx's own path costs ~30 µs per streamed event (six nested async generators, h11's
state machine, one `Data` event per HTTP chunk). This transport reads a plain HTTP/1.1
answer itself: one asyncio `Protocol` per connection (wire.py), and a body that is ONE
async iterator, each item all the data a socket read held (several events when the
server is quicker than us). Providers still hold an `httpx.AsyncClient`: its headers,
URL handling, timeouts, decoders (gzip) and exceptions are httpx's; only the wire is ours.

- TLS uses httpx's default context (`httpx.create_ssl_context()`: certifi, or the
  SSL_CERT_FILE / SSL_CERT_DIR files when set), the server's name checked.
- Timeouts come from the request (`ELELEM_CONNECT_TIMEOUT`, `ELELEM_READ_TIMEOUT`:
  http.py): connect, each write, each wait for bytes. Failures raise httpx's own
  exceptions (`ConnectError`, `ConnectTimeout`, `ReadTimeout`, `WriteTimeout`,
  `ReadError`, `RemoteProtocolError`), so the providers' error texts are unchanged.
- Cancelling a read, or closing the answer before its end, aborts the connection.
- Connections are kept alive: an answer read to its end goes back to a pool (at most
  MAX_IDLE per host, dropped after KEEPALIVE seconds idle or if the server spoke or
  closed meanwhile); a request a kept connection drops unanswered (the server's idle
  timeout, just then) is sent once more on a new one.
- A request whose body has no length (a chunked upload) goes to httpx's default
  transport. `build_client` does not install this transport at all when a proxy is
  set in the environment (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY): httpx then does what it
  always did.
"""

from __future__ import annotations

import asyncio
import os
import re
import ssl
import time
from collections.abc import AsyncIterator

import httpx

from .wire import MAX_HEAD, Chunked, Conn, ProtocolError, Timeout, body_length, parse_head

MAX_IDLE = 4
KEEPALIVE = 5.0
NO_BODY = frozenset({204, 304})
BROKE = "peer closed connection without sending complete message body: "
Key = tuple[str, str, int]
UNSAFE = re.compile(rb"[\r\n\0]")


def proxied() -> bool:
    """A proxy set in the environment (what httpx's `trust_env` would use)."""
    return any(
        os.environ.get(name, "").strip()
        for base in ("http_proxy", "https_proxy", "all_proxy")
        for name in (base, base.upper())
    )


class LeanTransport(httpx.AsyncBaseTransport):
    def __init__(self, context: ssl.SSLContext | None = None) -> None:
        self._context = context  # built at the first https connection (certifi: ~50 ms)
        self._fallback: httpx.AsyncHTTPTransport | None = None
        self.idle: dict[Key, list[Conn]] = {}

    @property
    def context(self) -> ssl.SSLContext:
        """httpx's default TLS context: certifi, or SSL_CERT_FILE / SSL_CERT_DIR."""
        if self._context is None:
            self._context = httpx.create_ssl_context()
        return self._context

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https") or "transfer-encoding" in request.headers:
            if self._fallback is None:
                self._fallback = httpx.AsyncHTTPTransport(verify=self.context)
            return await self._fallback.handle_async_request(request)
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        head = self.request_head(request)
        content = b"".join([part async for part in request.stream])  # type: ignore[union-attr]
        host = url.raw_host.decode("ascii")
        key: Key = (url.scheme, host, url.port or (443 if url.scheme == "https" else 80))
        for attempt in range(2):
            conn = self.take(key) if not attempt else None
            reused = conn is not None
            if conn is None:
                conn = await self.connect(request, key, timeouts.get("connect"))
            try:
                try:
                    await self.send(request, conn, head + content, timeouts.get("write"), reused)
                except httpx.WriteError as exc:  # it may have answered first (413) and closed
                    try:
                        return await self.answer(request, conn, key, timeouts.get("read"), False)
                    except httpx.HTTPError:
                        raise exc from None
                return await self.answer(request, conn, key, timeouts.get("read"), reused)
            except Stale:
                conn.close()  # the server closed the idle connection: once more, afresh
            except BaseException:
                conn.close()
                raise
        raise httpx.RemoteProtocolError(
            "Server disconnected without sending a response.", request=request
        )

    async def send(
        self, request: httpx.Request, conn: Conn, data: bytes, timeout: float | None, reused: bool
    ) -> None:
        try:
            await conn.write(data, timeout)
        except TimeoutError:
            raise httpx.WriteTimeout("timed out sending the request", request=request) from None
        except OSError as exc:
            if reused:
                raise Stale() from None
            raise httpx.WriteError(str(exc) or type(exc).__name__, request=request) from exc

    def request_head(self, request: httpx.Request) -> bytes:
        lines = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), request.url.raw_path)]
        for name, value in request.headers.raw:
            if UNSAFE.search(value) or UNSAFE.search(name) or b":" in name or b" " in name:
                raise httpx.LocalProtocolError("a header holds a line break", request=request)
            lines.append(name + b": " + value)
        return b"\r\n".join(lines) + b"\r\n\r\n"

    def take(self, key: Key) -> Conn | None:
        idle, now = self.idle.get(key, []), time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.usable and now - conn.idle_since < KEEPALIVE:
                return conn
            conn.close()
        return None

    def give(self, key: Key, conn: Conn) -> None:
        idle = self.idle.setdefault(key, [])
        if len(idle) >= MAX_IDLE or not conn.usable:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    async def connect(self, request: httpx.Request, key: Key, timeout: float | None) -> Conn:
        scheme, host, port = key
        tls = self.context if scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, conn = await loop.create_connection(
                    Conn, host, port, ssl=tls, server_hostname=host if tls else None
                )
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out connecting", request=request) from None
        except OSError as exc:  # ssl.SSLError is one too: a certificate not trusted
            raise httpx.ConnectError(str(exc), request=request) from exc
        return conn

    async def answer(
        self, request: httpx.Request, conn: Conn, key: Key, timeout: float | None, reused: bool
    ) -> httpx.Response:
        for _ in range(10):  # 1xx interim answers, then the answer
            data = await read_head(request, conn, timeout, reused)
            reused = False
            try:
                status, minor, reason, fields = parse_head(data)
                length = body_length(fields)
            except ProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc), request=request) from None
            if status >= 200 or status == 101:
                break
        else:
            raise httpx.RemoteProtocolError("too many interim answers", request=request)
        if status == 101:
            raise httpx.RemoteProtocolError("unexpected protocol switch", request=request)
        if request.method == "HEAD" or status in NO_BODY:
            length = 0
        closes = minor == b"0" or any(
            k.lower() == b"connection" and b"close" in v.lower() for k, v in fields
        )
        stream = Body(self, request, conn, key, length, timeout, keep=not closes)
        return httpx.Response(
            status,
            headers=fields,
            stream=stream,
            request=request,
            extensions={"http_version": b"HTTP/1." + minor, "reason_phrase": reason},
        )

    async def aclose(self) -> None:
        for idle in self.idle.values():
            for conn in idle:
                conn.close()
        self.idle.clear()
        if self._fallback is not None:
            await self._fallback.aclose()


class Stale(Exception):
    """A kept-alive connection the server had closed: nothing of the answer came."""


async def read_head(
    request: httpx.Request, conn: Conn, timeout: float | None, reused: bool
) -> bytes:
    head = bytearray()  # appended in place: a head sent a byte at a time stays linear
    while True:
        try:
            data = await read(request, conn, timeout)
        except httpx.ReadError:
            if reused and not head:
                raise Stale() from None
            raise
        if not data:
            if reused and not head:
                raise Stale()
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            )
        start = max(len(head) - 3, 0)
        head += data
        end = head.find(b"\r\n\r\n", start)
        if end >= 0:
            if end > MAX_HEAD:
                break
            conn.unread(bytes(head[end + 4 :]))
            return bytes(head[:end])
        if len(head) > MAX_HEAD:
            break
    raise httpx.RemoteProtocolError(f"the answer's head passed {MAX_HEAD} bytes", request=request)


async def read(request: httpx.Request, conn: Conn, timeout: float | None) -> bytes:
    """One read, its failures as httpx's."""
    try:
        return await conn.read(timeout)
    except Timeout:
        raise httpx.ReadTimeout("timed out reading", request=request) from None
    except OSError as exc:
        raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc


class Body(httpx.AsyncByteStream):
    """An answer's body: -1 chunked, a length, or None (until the server closes)."""

    def __init__(self, owner: LeanTransport, request: httpx.Request, conn: Conn, key: Key,
                 length: int | None, timeout: float | None, keep: bool) -> None:  # fmt: skip
        self.owner, self.request, self.conn, self.key = owner, request, conn, key
        self.length, self.timeout, self.keep = length, timeout, keep and length is not None
        self.ended = self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        request, conn, timeout = self.request, self.conn, self.timeout
        if self.length == -1:
            chunked = Chunked()
            while not chunked.done:
                data = await read(request, conn, timeout)
                if not data:
                    raise httpx.RemoteProtocolError(
                        BROKE + "incomplete chunked read", request=request
                    )
                try:
                    piece = chunked.feed(data)
                except ProtocolError as exc:
                    raise httpx.RemoteProtocolError(str(exc), request=request) from None
                if piece:
                    yield piece
            self.keep = self.keep and not chunked.extra
        elif self.length is not None:
            left = self.length
            while left:
                data = await read(request, conn, timeout)
                if not data:
                    raise httpx.RemoteProtocolError(
                        f"{BROKE}received {self.length - left} bytes, expected {self.length}",
                        request=request,
                    )
                if len(data) > left:
                    data, self.keep = data[:left], False
                left -= len(data)
                yield data
        else:
            while data := await read(request, conn, timeout):
                yield data
        self.ended = True

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.ended and self.keep:
            self.owner.give(self.key, self.conn)
        else:
            self.conn.close()
