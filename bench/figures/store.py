"""Storage: listing stored sessions and loading a large one (issue 22).

Files are written in the store's own format (`store.records.encode`) in a scratch
folder. Listing 1,000 sessions (`Store.list`, which reads each file's first line
only) and loading a 60 MB session (`Store.load`, 10,000 messages of ~6 KB) run in
this process, best of 5; then `session/load` of that session through the daemon
(spawned on the same folder), which is what an editor waits for, and a `session/list`
sent while that load runs (what the load holds up of the other sessions' requests:
the file is read in a thread and the answer encoded in one, faces/daemon/spliced.py;
it is still written on the event loop). The growth rows load 10k / 100k / 1M short
messages: a per-message cost that stays flat is linear.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from elelem_daemon.store import records
from elelem_daemon.store.store import Store

from ..context import Context, initialize
from ..table import Row

LIST_TARGET_MS, LOAD_TARGET_MS = 100.0, 2000.0


def write_session(folder: Path, session_id: str, messages: int, size: int, cwd: str) -> Path:
    path = folder / f"{session_id}.jsonl"
    head = {
        "type": "session",
        "version": records.VERSION,
        "id": session_id,
        "cwd": cwd,
        "provider": "stub",
        "model": None,
        "created": "2026-12-01T00:00:00.000Z",
        "title": f"session {session_id}",
    }
    body = "x" * size
    with path.open("wb") as out:
        out.write(records.encode(head))
        for n in range(messages):
            role = "user" if n % 2 == 0 else "assistant"
            record = {"type": "message", "role": role, "content": f"{n} {body}", "at": "t"}
            out.write(records.encode(record))
    return path


def best_ms(fn, rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times)


async def daemon_load_ms(ctx: Context, state: Path, session_id: str) -> tuple[float, float]:
    """`session/load` request → answer; and a `session/list` sent just after it, request
    → answer: how long the load holds up the daemon's other requests."""
    conn = await ctx.daemon(ELELEM_STATE_DIR=str(state))
    try:
        await initialize(conn)
        await conn.request("session/list", {})  # the protocol loaded: time the load alone
        start = time.perf_counter()
        _, loading = conn.start("session/load", {"sessionId": session_id})
        await asyncio.sleep(0.01)  # the load is under way
        asked = time.perf_counter()
        await conn.request("session/list", {}, timeout=600)
        other = (time.perf_counter() - asked) * 1000
        result = await asyncio.wait_for(loading, 600)
        elapsed = (time.perf_counter() - start) * 1000
        if result.get("sessionId") != session_id:
            raise RuntimeError(f"session/load: {str(result)[:200]}")
    finally:
        await conn.close()
    return elapsed, other


async def run(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    listed = ctx.n(1000, 100)
    with tempfile.TemporaryDirectory(prefix="bench-store-", dir="/dev/shm") as tmp:
        folder = Path(tmp) / "sessions"
        folder.mkdir()
        for n in range(listed):
            write_session(folder, f"s{n:05d}", 20, 200, str(ctx.home))
        store = Store(folder)
        assert len(store.list()) == listed
        ms = best_ms(store.list)
        rows.append(
            Row(
                f"list {listed:,} stored sessions",
                ms,
                "ms",
                target=f"≤ {LIST_TARGET_MS:g} ms",
                ok=ms <= LIST_TARGET_MS,
                note="Store.list: each file's first line; best of 5",
            )
        )
        big = ctx.n(10_000, 1_000)
        path = write_session(folder, "big", big, 6_000, str(ctx.home))
        mb = path.stat().st_size / 1e6
        ms = best_ms(lambda: store.load("big"), 3)
        rows.append(
            Row(
                f"load a {mb:.0f} MB session ({big:,} messages)",
                ms,
                "ms",
                target=f"≤ {LOAD_TARGET_MS:g} ms",
                ok=ms <= LOAD_TARGET_MS,
                note="Store.load; best of 3",
            )
        )
        state = Path(tmp) / "state"
        (state / "sessions").mkdir(parents=True)
        path.rename(state / "sessions" / path.name)
        ms, other = await daemon_load_ms(ctx, state, "big")
        rows.append(
            Row(
                f"session/load of the {mb:.0f} MB session, through the daemon",
                ms,
                "ms",
                target=f"≤ {LOAD_TARGET_MS:g} ms",
                ok=ms <= LOAD_TARGET_MS,
                note="request → answer (the history is in the answer)",
            )
        )
        rows.append(
            Row(
                "… a session/list sent during that load",
                other,
                "ms",
                note="request → answer: what the load holds up of the other requests",
            )
        )
        for count in ctx.n((10_000, 100_000, 1_000_000), (1_000, 10_000)):
            write_session(folder, f"g{count}", count, 40, str(ctx.home))
            ms = best_ms(lambda c=count: store.load(f"g{c}"), 1)
            rows.append(
                Row(
                    f"load {count:,} short messages",
                    ms,
                    "ms",
                    note=f"{ms * 1000 / count:.1f} µs per message",
                )
            )
            (folder / f"g{count}.jsonl").unlink()
    return rows
