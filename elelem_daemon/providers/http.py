"""HTTPProvider: what the real providers share. Client, timeouts, retries, error text.

A subclass says what to send (`request`) and how to read the answer (`decode`);
`fetch` does the rest:

- one `httpx.AsyncClient` per endpoint, shared by every session's provider (clients.py:
  httpx's own transport, with its TLS defaults and the proxies of the environment, made
  once, at the first request to that endpoint, an https one in a worker thread; a
  plain-http endpoint's sets up no TLS); a test may inject a client of its own;
- a non-2xx answer becomes `ProviderError("NAME STATUS: the API's own message")`;
- connection failures and timeouts name the URL that failed;
- 429, 500, 502, 503, 529, connection failures and a stream that breaks off are
  retried with capped exponential backoff that honours `retry-after`, but only
  while no event of that answer has been emitted;
- every error text passes through `redact`, so an API key never leaves;
- a request too long for the model's context (each API's own code or words) is flagged
  `context_overflow` in the error's data, for the agent to say how to recover.

Settings (environment, read when the provider is built):

    ELELEM_CONNECT_TIMEOUT   seconds to open a connection              (default 10)
    ELELEM_READ_TIMEOUT      seconds to wait for the next bytes        (default 600)
    ELELEM_RETRIES           retries before anything was streamed      (default 2)
    ELELEM_RETRY_MAX_DELAY   longest wait before a retry, in seconds   (default 60)
    ELELEM_MAX_LINE, ELELEM_MAX_REPLY   bounds on what a stream may send (lines.py)

An error answer's body is read up to 64 KiB, no more.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx

from ..base.errors import ProviderError
from ..base.jsonsafe import dumps, loads
from . import clients
from .failures import error_detail, retry_after, root_cause
from .lines import MAX_LINE, MAX_REPLY, Splitter, batches, body, head, lines
from .sse import Event, read_events
from .window import Windowed

log = logging.getLogger(__name__)
METADATA_BYTES = 4 * 1024 * 1024  # the most a metadata answer (a model list) may send

RETRY_STATUS = frozenset({429, 500, 502, 503, 529})
NO_RETRY_CODES = frozenset({"insufficient_quota", "enforced_spend_limit_reached"})
BASE_DELAY = 1.0
# OpenAI's code, llama.cpp's type; Anthropic, vLLM and others say it in words
CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
CONTEXT_WORDS = re.compile(
    r"maximum context length|context (size|length|window)|prompt is too long", re.IGNORECASE
)


def setting(name: str, default: float, env: dict[str, str] | None = None) -> float:
    """A non-negative number from the environment, or a clear error naming the variable."""
    raw = (os.environ if env is None else env).get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0 or value != value:
        raise ProviderError(f"{name} must be a number >= 0, got {raw!r}")
    return value


def timeouts() -> httpx.Timeout:
    """ELELEM_CONNECT_TIMEOUT for connecting, each write and a pooled connection;
    ELELEM_READ_TIMEOUT for each wait for bytes."""
    connect = setting("ELELEM_CONNECT_TIMEOUT", 10.0)
    read = setting("ELELEM_READ_TIMEOUT", 600.0)
    return httpx.Timeout(read, connect=connect, write=connect, pool=connect)


def build_client(timeout: httpx.Timeout | None = None) -> httpx.AsyncClient:
    """The providers' client: httpx's, as shipped: its transport (httpcore, h11), its
    TLS defaults (certifi, or SSL_CERT_FILE / SSL_CERT_DIR), the proxies of the
    environment (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY), and our timeouts."""
    return clients.build(timeout or timeouts())


class Failure(ProviderError):
    """A ProviderError that may be worth another try (before anything was emitted)."""

    def __init__(
        self, text: str, retryable: bool = False, retry_after: float | None = None, **data: Any
    ):
        super().__init__(text, **data)
        self.retryable = retryable
        self.retry_after = retry_after


class HTTPProvider(Windowed):
    """Base class: subclasses set `name` and implement `request` and `decode` (and may
    answer `window_lookup`: window.py)."""

    name = "http"
    hint = ""  # added to connection failures, e.g. how to start a local server
    cache_key: str | None = None  # the session's id, set by the session (prompt caching)
    billed = False  # whether turns/usage.py may price its tokens from its own table

    def __init__(self, client: httpx.AsyncClient | None = None) -> None:
        self.timeout = client.timeout if client is not None else timeouts()  # checked now
        self.made: httpx.AsyncClient | None = client  # injected: the provider's own
        self.retries = int(setting("ELELEM_RETRIES", 2))
        self.max_delay = setting("ELELEM_RETRY_MAX_DELAY", 60.0)
        self.sleep = asyncio.sleep  # tests replace it to see the waits
        self.secrets: list[str] = []
        self.max_line = int(setting("ELELEM_MAX_LINE", MAX_LINE))
        self.max_reply = int(setting("ELELEM_MAX_REPLY", MAX_REPLY))

    @property
    def client(self) -> httpx.AsyncClient | None:
        """The client injected, if any (else the endpoint's shared one: `client_for`)."""
        return self.made

    @client.setter
    def client(self, client: httpx.AsyncClient) -> None:
        self.made, self.timeout = client, client.timeout

    async def client_for(self, url: str) -> httpx.AsyncClient:
        """The client to ask `url` with: the injected one, else its endpoint's shared
        client (clients.py), made at the first ask of any session."""
        if self.made is not None:
            return self.made
        return await clients.shared(url, self.timeout)

    # -- what a subclass provides ---------------------------------------------
    def request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        """The URL, headers and JSON body of one streamed request."""
        raise NotImplementedError

    def decode(self, response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
        """The agent's events from a 2xx streamed answer (read it with `lines` or `batches`)."""
        raise NotImplementedError

    def lines(self, response: httpx.Response) -> AsyncIterator[str]:
        """The answer's lines, each and all of them bounded (providers/lines.py)."""
        return lines(response, self.name, self.max_line, self.max_reply)

    def batches(self, response: httpx.Response) -> AsyncIterator[list[str]]:
        """The same lines, one list per read (what `sse.sse_events` reads)."""
        return batches(response, self.name, self.max_line, self.max_reply)

    def events(self, response: httpx.Response) -> AsyncIterator[list[Event]]:
        """The answer's server-sent events, one list per read, the lines bounded as
        `lines` bounds them (`sse.read_events`: `sse_events` of `batches`, in one step)."""
        return read_events(body(response), Splitter(self.name, self.max_line, self.max_reply))

    def status_text(self, status: int, message: str) -> str:
        return f"{self.name} {status}: {message or httpx.codes.get_reason_phrase(status)}"

    # -- shared ---------------------------------------------------------------
    async def fetch(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[dict[str, Any]]:
        url, headers, body = self.request(messages, tools)
        # the bytes httpx's json= sends, but never NaN or Infinity (jsonsafe.dumps)
        content = dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        if not any(key.lower() == "content-type" for key in headers):
            headers = {**headers, "content-type": "application/json"}
        attempt = 0
        while True:
            emitted = False
            try:
                client = await self.client_for(url)
                async with client.stream("POST", url, headers=headers, content=content) as response:
                    if not response.is_success:
                        raise self.status_failure(response, await head(response))
                    async for event in self.decode(response):
                        emitted = True
                        yield event
                return
            except httpx.HTTPError as exc:
                failure = self.transport_failure(exc, url)
            except Failure as exc:
                failure = exc
            except ProviderError as exc:
                raise ProviderError(self.redact(str(exc))) from None
            except (KeyError, TypeError, AttributeError, IndexError) as exc:
                failure = Failure(
                    f"{self.name}: unexpected stream data ({type(exc).__name__}: {exc})"
                )
            text = self.redact(str(failure))
            if emitted or not failure.retryable or attempt >= self.retries:
                raise ProviderError(text, **failure.data) from None
            delay = self.backoff(attempt, failure.retry_after)
            if delay is None:
                raise ProviderError(
                    f"{text} (retry after {failure.retry_after:.0f} s)", **failure.data
                ) from None
            attempt += 1
            log.warning("%s; retry %d/%d in %.1f s", text, attempt, self.retries, delay)
            await self.sleep(delay)

    def backoff(self, attempt: int, after: float | None) -> float | None:
        """Seconds to wait: the server's `retry-after` (None if beyond the cap), else
        exponential with jitter, capped."""
        if after is not None:
            return after if after <= self.max_delay else None
        delay = min(BASE_DELAY * 2**attempt, self.max_delay)
        return delay * (0.5 + random.random() / 2)

    def status_failure(self, response: httpx.Response, body: bytes | None = None) -> Failure:
        message, codes = error_detail(response.content if body is None else body)
        status = response.status_code
        overflow = status in (400, 413) and bool(
            codes & CONTEXT_CODES or CONTEXT_WORDS.search(message)
        )
        return Failure(
            self.status_text(status, message),
            retryable=status in RETRY_STATUS and not codes & NO_RETRY_CODES,
            retry_after=retry_after(response.headers),
            **({"context_overflow": True} if overflow else {}),
        )

    def transport_failure(self, exc: httpx.HTTPError, url: str) -> Failure:
        timeout = self.timeout
        hint = f" ({self.hint})" if self.hint else ""
        if isinstance(exc, httpx.ConnectTimeout):
            return Failure(
                f"{self.name}: cannot connect to {url}: no answer within {timeout.connect:g} s "
                f"(ELELEM_CONNECT_TIMEOUT){hint}",
                retryable=True,
            )
        if isinstance(exc, httpx.TimeoutException):
            return Failure(
                f"{self.name}: {url} sent nothing for {timeout.read:g} s (ELELEM_READ_TIMEOUT)"
            )
        if isinstance(exc, httpx.ConnectError):
            reason = root_cause(exc)
            return Failure(f"{self.name}: cannot connect to {url}: {reason}{hint}", retryable=True)
        if isinstance(exc, httpx.TransportError):
            reason = str(exc) or type(exc).__name__
            return Failure(f"{self.name}: the stream from {url} broke off: {reason}", True)
        return Failure(f"{self.name}: {url}: {exc}")

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            if secret and len(secret) >= 4:
                text = text.replace(secret, "***")
        return text

    def parse(self, data: str, what: str = "stream data") -> Any:
        """JSON from one stream line, or a clear error quoting (the start of) the line."""
        try:
            return loads(data)  # bounded nesting: a hostile stream is malformed, not a crash
        except ValueError:
            clipped = data if len(data) <= 120 else data[:120] + "..."
            raise ProviderError(f"{self.name}: malformed {what}: {clipped!r}") from None

    async def get_json(
        self, url: str, headers: dict[str, str] | None = None, body: Any = None
    ) -> Any:
        """A small metadata request (GET, or POST with a JSON body): its JSON, at most
        METADATA_BYTES of it, or a ProviderError. Never retried: it is no turn's business."""
        method, payload = ("GET", None) if body is None else ("POST", body)
        client = await self.client_for(url)
        async with client.stream(method, url, headers=headers, json=payload) as response:
            data = await head(response, METADATA_BYTES + 1)
            if not response.is_success:
                raise self.status_failure(response, data)
        if len(data) > METADATA_BYTES:
            raise ProviderError(f"{self.name}: {url} sent more than {METADATA_BYTES} bytes")
        return self.parse(data.decode("utf-8", "replace"), "metadata")

    async def aclose(self) -> None:
        """Close an injected client; a shared one stays for the other sessions."""
        if self.made is not None:
            await self.made.aclose()
