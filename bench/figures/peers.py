"""Peers (`--peers`, not in CI): the real agents beside ours, read by the same client.

Installs the npm packages `@openai/codex`, `@zed-industries/codex-acp` and
`@zed-industries/claude-code-acp` into a cache folder (`$XDG_CACHE_HOME/elelem-bench/
peers`, npm's own client; nothing is installed when they are there already), then
measures each like the daemon: spawn → `initialize` answered, spawn → the first
session answered (`thread/start` for `codex app-server`, ACP `session/new` for the
others; an error answer, such as an authentication error, counts as an answer and is
noted), and the RSS of its whole process tree after that. Median of 5 runs each,
alternating with `elelem daemon` and `elelem daemon --acp`. Scratch HOME: no peer
finds a login, which is what a first start looks like.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elelem_daemon.processes.procs import descendants

from ..context import Context, initialize
from ..table import Row, median
from ..wire import Conn, RpcError

PACKAGES = ("@openai/codex", "@zed-industries/codex-acp", "@zed-industries/claude-code-acp")
INSTALL_TIMEOUT = 900
CODEX_TARGET = 1.5  # our ready session, × codex app-server's


def cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elelem-bench" / "peers"


async def install() -> Path | str:
    """The folder of installed peers, or why they could not be installed."""
    folder = cache()
    bins = folder / "node_modules" / ".bin"
    if all((bins / name).exists() for name in ("codex", "codex-acp", "claude-code-acp")):
        return bins
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    folder.mkdir(parents=True, exist_ok=True)
    process = await asyncio.create_subprocess_exec(
        npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), *PACKAGES,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        _, err = await asyncio.wait_for(process.communicate(), INSTALL_TIMEOUT)
    except TimeoutError:
        process.kill()
        return f"npm install took over {INSTALL_TIMEOUT} s"
    if process.returncode != 0:
        return f"npm install failed: {err.decode(errors='replace').strip()[-300:]}"
    return bins


@dataclass
class Peer:
    name: str
    spawn: Callable[[], Awaitable[Conn]]
    init: Callable[[Conn], Awaitable[Any]]
    session: Callable[[Conn], Awaitable[Any]]


def tree_rss_mb(conn: Conn) -> float:
    total = 0
    for pid in {conn.proc.pid, *descendants(conn.proc.pid)}:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as status:
                total += next(int(x.split()[1]) for x in status if x.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


async def measure(peer: Peer) -> tuple[float, float, float, str]:
    """(ms to initialize, ms to the session answer, RSS MB, a note on the answer)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    conn = await peer.spawn()
    try:
        await peer.init(conn)
        init = loop.time()
        note = ""
        try:
            await peer.session(conn)
        except RpcError as exc:
            note = f"answered with error {exc.code}: {exc.message[:40]}"
        ready = loop.time()
        await asyncio.sleep(0.3)
        rss = tree_rss_mb(conn)
    finally:
        await conn.close()
    return (init - start) * 1000, (ready - start) * 1000, rss, note


def peers(ctx: Context, bins: Path) -> list[Peer]:
    cwd = str(ctx.home)

    async def spawn_ndjson(*argv: str) -> Conn:
        return await Conn.spawn(list(argv), framing="ndjson", env=ctx.env(), cwd=cwd)

    async def acp_init(conn: Conn) -> Any:
        return await conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    async def acp_new(conn: Conn) -> Any:
        return await conn.request("session/new", {"cwd": cwd, "mcpServers": []}, timeout=60)

    async def codex_init(conn: Conn) -> Any:
        answer = await conn.request("initialize", {"clientInfo": {"name": "bench", "version": "1"}})
        conn.notify("initialized", {})
        return answer

    async def codex_thread(conn: Conn) -> Any:
        return await conn.request("thread/start", {"cwd": cwd}, timeout=60)

    async def daemon_new(conn: Conn) -> Any:
        return await conn.request("session/new", {"cwd": cwd})

    return [
        Peer("elelem daemon", ctx.daemon, initialize, daemon_new),
        Peer("elelem daemon --acp", ctx.acp, acp_init, acp_new),
        Peer("codex app-server", lambda: spawn_ndjson(str(bins / "codex"), "app-server"),
             codex_init, codex_thread),
        Peer("codex-acp", lambda: spawn_ndjson(str(bins / "codex-acp")), acp_init, acp_new),
        Peer("claude-code-acp", lambda: spawn_ndjson(str(bins / "claude-code-acp")),
             acp_init, acp_new),
    ]  # fmt: skip


async def run(ctx: Context) -> list[Row]:
    bins = await install()
    if isinstance(bins, str):
        return [Row("peers", None, note=f"not measured: {bins}")]
    table = peers(ctx, bins)
    runs = ctx.n(5, 1)
    seen: dict[str, list[tuple[float, float, float, str]]] = {p.name: [] for p in table}
    for _ in range(runs):
        for peer in table:
            try:
                seen[peer.name].append(await measure(peer))
            except Exception as exc:  # a peer that does not start is a figure too
                seen[peer.name].append((float("nan"),) * 3 + (f"{type(exc).__name__}",))
    rows: list[Row] = []
    readies: dict[str, float] = {}
    for peer in table:
        times = [t for t in seen[peer.name] if t[1] == t[1]]  # not NaN
        if not times:
            rows.append(Row(f"peer {peer.name}", None, note=seen[peer.name][0][3]))
            continue
        init, ready = median([t[0] for t in times]), median([t[1] for t in times])
        rss = median([t[2] for t in times])
        note = next((t[3] for t in times if t[3]), "")
        rows.append(Row(f"peer {peer.name}: spawn → initialize", init, "ms"))
        rows.append(Row(f"peer {peer.name}: spawn → session answer", ready, "ms", note=note))
        rows.append(Row(f"peer {peer.name}: RSS after a session (process tree)", rss, "MB"))
        readies[peer.name] = ready
    codex = readies.get("codex app-server")
    for name in ("elelem daemon", "elelem daemon --acp"):
        if codex and name in readies:
            rows.append(
                Row(
                    f"ready session, {name} × codex app-server",
                    readies[name],
                    "ms",
                    codex,
                    target=f"≤ {CODEX_TARGET:g}×",
                    ok=readies[name] <= CODEX_TARGET * codex,
                    note=f"medians of {runs}",
                )
            )
    return rows
