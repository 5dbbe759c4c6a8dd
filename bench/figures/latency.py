"""Token latency: from an SSE chunk leaving a local OpenAI-format server to the client
reading the matching `event/saying`.

The server (`servers/sse.py`, its own process) stamps each chunk just before writing
it; the client stamps each notification when its bytes were read from the daemon's
stdout. Both clocks are CLOCK_MONOTONIC. The chunks are 2 ms apart, so the figure is
the daemon's added latency (HTTP read, SSE parse, agent, notify), not queueing.
"""

from __future__ import annotations

import asyncio
import json
import sys

from ..context import SERVERS, Context, initialize, open_session
from ..table import Row, percentile
from ..wire import RpcError

P50_MS, P99_MS = 1.0, 5.0
GAP_MS = 2


async def spawn_sse(ctx: Context) -> tuple[asyncio.subprocess.Process, int]:
    proc = await asyncio.create_subprocess_exec(
        ctx.python, str(SERVERS / "sse.py"), stdout=asyncio.subprocess.PIPE, stderr=sys.stderr
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 10)
    if not line.strip():
        raise RuntimeError("the SSE server did not start")
    return proc, int(line)


async def get_stamps(port: int) -> list[float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /stamps HTTP/1.1\r\nHost: bench\r\nContent-Length: 0\r\n\r\n")
    await writer.drain()
    response = await reader.read()
    writer.close()
    return json.loads(response.partition(b"\r\n\r\n")[2])


async def run(ctx: Context) -> list[Row]:
    count = ctx.n(1000, 100)
    server, port = await spawn_sse(ctx)
    conn = await ctx.daemon(
        OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="bench", OPENAI_MODEL="bench"
    )
    try:
        await initialize(conn)
        try:
            session = await open_session(conn, ctx.home, provider="openai")
        except RpcError as exc:
            if exc.error.get("data", {}).get("kind") != "unknown_provider":
                raise
            return [
                Row(
                    "token latency",
                    None,
                    target=f"p50 ≤ {P50_MS:g} ms, p99 ≤ {P99_MS:g} ms",
                    note="not measured: no `openai` provider in this build (issue 4)",
                )
            ]
        received: dict[int, float] = {}

        def on_saying(params: dict) -> None:
            for token in params["text"].split():
                if token.startswith("c") and token[1:].isdigit():
                    received[int(token[1:])] = conn.stamp

        conn.on_notify["event/saying"] = on_saying
        for size in (20, count):  # a warm-up turn opens the HTTP connection pool
            received.clear()
            result = await conn.request(
                "session/turn", {"sessionId": session, "text": f"{size} {GAP_MS}"}
            )
            if result.get("stopReason") != "end_turn" or len(received) != size:
                raise RuntimeError(f"openai turn: {len(received)} of {size} chunks, {result}")
        sent = await get_stamps(port)
    finally:
        await conn.close()
        server.terminate()
        await server.wait()
    ms = [(received[i] - sent[i]) * 1000 for i in range(count)]
    p50, p99 = percentile(ms, 50), percentile(ms, 99)
    note = f"{count:,} chunks {GAP_MS} ms apart, openai provider"
    return [
        Row("token latency p50", p50, "ms", target=f"≤ {P50_MS:g} ms", ok=p50 <= P50_MS, note=note),
        Row("token latency p99", p99, "ms", target=f"≤ {P99_MS:g} ms", ok=p99 <= P99_MS),
    ]
