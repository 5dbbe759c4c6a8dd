"""Cold start: spawn `elelem daemon` until its `initialize` response.

Side by side with the bare asyncio echo server (`servers/echo.py`): the runs alternate,
so both sides see the same machine load. Median of the runs, after one warm-up each.

A second, informative row goes one step further: until the answer to the first real
request (`session/new` for the daemon, any request for the echo server), which is when
a user can start typing. The ready-session row (issue 22) runs the same steps against
the ACP face of the same checkout (`elelem daemon --acp`, NDJSON): the two faces share
the core, so the ratio is what the daemon face's own transport costs.

Issue 30 dropped the targets of the cold start (≤ 2.5× the bare server) and of the ready
session (≤ 1.2× the ACP face): only a stand-in for lsprotocol and an early responder
before pygls reached them. The rows stay, informative; the start-up target a user feels
is the ready chat against the peers (`--peers`), since the editor clients prestart the
daemon.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..context import Context, initialize
from ..table import Row, median
from ..wire import Conn

ASK_TARGET = 1.3  # `elelem ask`, whole, × the ACP face's spawn → session
Step = Callable[[Conn], Awaitable[Any]]


@dataclass
class Server:
    spawn: Callable[[], Awaitable[Conn]]
    init: Step
    first: Step  # the first real request after initialize


async def start_ms(server: Server) -> tuple[float, float]:
    """Milliseconds from spawning to the `initialize` answer, and to the first request's."""
    start = time.perf_counter()
    conn = await server.spawn()
    try:
        await server.init(conn)
        init = time.perf_counter()
        await server.first(conn)
        ready = time.perf_counter()
    finally:
        await conn.close()
    return (init - start) * 1000, (ready - start) * 1000


def daemon(ctx: Context) -> Server:
    async def new(conn: Conn) -> Any:
        return await conn.request("session/new", {"cwd": str(ctx.home)})

    return Server(ctx.daemon, initialize, new)


def acp(ctx: Context) -> Server:
    async def init(conn: Conn) -> Any:
        return await conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    async def new(conn: Conn) -> Any:
        return await conn.request("session/new", {"cwd": str(ctx.home), "mcpServers": []})

    return Server(ctx.acp, init, new)


def echo(ctx: Context) -> Server:
    async def ping(conn: Conn) -> Any:
        return await conn.request("ping", {"cwd": str(ctx.home)})

    return Server(ctx.echo, initialize, ping)


async def side_by_side(
    ctx: Context, ours: Server, theirs: Server
) -> tuple[tuple[float, float], tuple[float, float], int]:
    """Median (initialize, first request) times of two servers, alternating; the run count."""
    runs = ctx.n(15, 3)
    await start_ms(ours)  # warm-up: the page cache, the bytecode
    await start_ms(theirs)
    a, b = [], []
    for _ in range(runs):
        a.append(await start_ms(ours))
        b.append(await start_ms(theirs))

    def medians(times: list[tuple[float, float]]) -> tuple[float, float]:
        return median([t[0] for t in times]), median([t[1] for t in times])

    return medians(a), medians(b), runs


async def run(ctx: Context) -> list[Row]:
    (init, ready), (bare_init, bare_ready), runs = await side_by_side(ctx, daemon(ctx), echo(ctx))
    note = f"median of {runs}; baseline: bare asyncio echo server"
    return [
        Row(
            "cold start (spawn → initialize)",
            init,
            "ms",
            bare_init,
            note=f"{note} (informative)",
        ),
        Row("cold start to a session (→ session/new)", ready, "ms", bare_ready, note=note),
        *await ready_session(ctx),
    ]


async def ask_ms(ctx: Context) -> float:
    """Milliseconds from spawning `elelem ask '!echo hi'` (stub provider, no terminal) to
    its exit, its reply read."""
    argv = [*ctx.daemon_argv()[:-1], "ask", "!echo hi"]
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=ctx.env(),
        cwd=str(ctx.home),
    )
    out, _ = await process.communicate()
    elapsed = (time.perf_counter() - start) * 1000
    if process.returncode != 0 or out.strip() != b"hi":
        raise RuntimeError(f"elelem ask: exit {process.returncode}, {out[:200]!r}")
    return elapsed


async def ready_session(ctx: Context) -> list[Row]:
    """Spawn → the first `session/new` answer: the daemon face against the ACP face; and
    `elelem ask`, whole, against the ACP face's session."""
    (_, ready), (acp_init, acp_ready), runs = await side_by_side(ctx, daemon(ctx), acp(ctx))
    ask_runs, acp_server = ctx.n(15, 3), acp(ctx)
    await ask_ms(ctx)
    asks, sessions = [], []
    for _ in range(ask_runs):
        asks.append(await ask_ms(ctx))
        sessions.append((await start_ms(acp_server))[1])
    ask, session = median(asks), median(sessions)
    return [
        Row(
            "ready session, daemon face (spawn → session/new)",
            ready,
            "ms",
            acp_ready,
            note=f"median of {runs}; baseline: `elelem daemon --acp`, the same steps (informative)",
        ),
        Row(
            "`elelem ask` (stub), spawn → exit",
            ask,
            "ms",
            session,
            target=f"≤ {ASK_TARGET}× ACP face's session",
            ok=ask / session <= ASK_TARGET,
            note=f"median of {ask_runs}; one `!echo` turn; baseline: ACP face → session/new",
        ),
        Row(
            "ready session, ACP face: spawn → initialize",
            acp_init,
            "ms",
            note=f"median of {runs} (informative)",
        ),
    ]
