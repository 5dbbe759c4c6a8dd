"""Clients: one `httpx.AsyncClient` per provider endpoint, shared by every session.

A session's provider asks `shared(url, timeout)` for the client of the endpoint it
sends to (scheme, host and port, with the timeouts the environment set): the first ask
makes it, every later one (any session, any provider of that endpoint) gets the same
client and so its pooled connections. Making one is kept off the event loop where it
costs: an `https` client loads its certificate trust (httpx's defaults: certifi, or
`SSL_CERT_FILE` / `SSL_CERT_DIR`; 20-80 ms) in a worker thread; a plain-`http` client
sets up no TLS at all (`verify=False`: no certificate is loaded, and the client only
ever asks its own plain-http endpoint, following no redirects), which takes about a
millisecond, so it is made in place; unless the environment sends plain http through an
https proxy (`HTTP_PROXY` or `ALL_PROXY` starting with `https:`), whose certificate is
checked as usual.

The clients are kept per event loop (their connections belong to the loop that opened
them) and live as long as it: a session's end never closes a shared client (other
sessions use it). A client a test injects into a provider is the provider's own.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx

Key = tuple[str, str, int | None, tuple[float | None, ...]]
Pool = dict[Key, "asyncio.Future[httpx.AsyncClient]"]
_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = weakref.WeakKeyDictionary()
_answers: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[object, ...], asyncio.Future[Any]]
] = weakref.WeakKeyDictionary()
T = TypeVar("T")


def build(timeout: httpx.Timeout, plain: bool = False) -> httpx.AsyncClient:
    """httpx's client as shipped (its transport, its TLS defaults, the environment's
    proxies) with our timeouts; `plain`: for a plain-http endpoint, no TLS set-up."""
    if plain:
        return httpx.AsyncClient(timeout=timeout, verify=False)
    return httpx.AsyncClient(timeout=timeout)


def key_of(url: str, timeout: httpx.Timeout) -> Key:
    parsed = httpx.URL(url)
    limits = (timeout.connect, timeout.read, timeout.write, timeout.pool)
    return (parsed.scheme, parsed.host, parsed.port, limits)


def _pool() -> Pool:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = {}
    return pool


async def shared(url: str, timeout: httpx.Timeout) -> httpx.AsyncClient:
    """The one client of `url`'s endpoint on this loop, made at the first ask (an
    https one in a worker thread; the others wait for it, never make a second)."""
    key = key_of(url, timeout)
    pool = _pool()
    made = pool.get(key)
    if made is None or (made.done() and _unusable(made)):
        made = pool[key] = asyncio.get_running_loop().create_future()
        try:
            if key[0] == "http" and not _https_proxy():
                client = build(timeout, plain=True)
            else:
                client = await asyncio.to_thread(build, timeout)
        except BaseException as exc:
            del pool[key]
            if isinstance(exc, asyncio.CancelledError):
                made.cancel()
            else:
                made.set_exception(exc)
                made.exception()  # the caller gets it raised: retrieved
            raise
        made.set_result(client)
    return await asyncio.shield(made)


def _https_proxy() -> bool:
    """Whether plain http may go through an https proxy (then TLS is set up as usual)."""
    names = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
    return any(os.environ.get(name, "").strip().lower().startswith("https:") for name in names)


def _unusable(made: asyncio.Future[httpx.AsyncClient]) -> bool:
    return made.cancelled() or made.exception() is not None or made.result().is_closed


def count() -> int:
    """How many shared clients this loop holds (tests, the bench)."""
    return len(_pool())


def once(key: tuple[object, ...], make: Callable[[], Awaitable[T]]) -> asyncio.Future[T]:
    """The one answer of `make()` for `key` on this loop (an endpoint's metadata: what a
    server says of itself), started at the first ask, in the background, and shared by
    every later ask. An answer that failed is asked again next time."""
    answers = _answers.setdefault(asyncio.get_running_loop(), {})
    found = answers.get(key)
    if found is None or (found.done() and (found.cancelled() or found.exception())):
        found = answers[key] = asyncio.ensure_future(make())
    return found  # type: ignore[return-value]
