"""`session/load` of a 61 MB session through daemons side by side, in phases (issue 22).

`python -m bench.load_ab PYTHON [PYTHON ...]` (from this checkout) writes the store
figure's session (`figures.store.write_session`: 10,000 messages of ~6 KB) in /dev/shm,
then loads it through `elelem daemon` of each interpreter named (another checkout's
`.venv/bin/python`: an A/B of its daemon with this same client), `R` rounds (default
4), the order turned each round, and prints per run and then as medians:

    first byte   request → the first bytes of the answer read (the daemon's load,
                 `messages`, the encoding)
    bytes        first → last bytes of the answer (the write, paced by the client)
    parse        last bytes → the answer parsed and handed over (the client's work)
    total        request → answer, what `figures.store.daemon_load_ms` reports

with the load average of each run: this machine is shared, so compare only runs made
side by side.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from .context import Context, initialize
from .figures.store import write_session

R = int(os.environ.get("R", "4"))


async def phases(python: str, state: Path) -> list[float]:
    conn = await Context(daemon_python=python).daemon(ELELEM_STATE_DIR=str(state))
    try:
        await initialize(conn)
        await conn.request("session/list", {})  # the protocol loaded: time the load alone
        stdout = conn.proc.stdout
        assert stdout is not None
        reads: list[float] = []
        read = stdout.read

        async def timed(size: int = -1) -> bytes:
            chunk = await read(size)
            reads.append(time.perf_counter())
            return chunk

        stdout.read = timed  # type: ignore[method-assign]
        start = time.perf_counter()
        result = await conn.request("session/load", {"sessionId": "big"}, timeout=600)
        end = time.perf_counter()
        if result.get("sessionId") != "big":
            raise RuntimeError(f"session/load: {str(result)[:200]}")
    finally:
        await conn.close()
    answer = [at for at in reads if at <= end]  # not the reads of the close
    first, last = answer[0], answer[-1]
    return [
        (first - start) * 1000,
        (last - first) * 1000,
        (end - last) * 1000,
        (end - start) * 1000,
    ]


async def main(pythons: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-load-", dir="/dev/shm") as tmp:
        state = Path(tmp) / "state"
        (state / "sessions").mkdir(parents=True)
        write_session(state / "sessions", "big", 10_000, 6_000, tmp)
        runs: dict[str, list[list[float]]] = {python: [] for python in pythons}
        for n in range(R):
            for python in pythons if n % 2 == 0 else pythons[::-1]:
                figures = await phases(python, state)
                runs[python].append(figures)
                shown = ", ".join(f"{f:,.0f}" for f in figures)
                print(f"{python}: {shown} ms (load {os.getloadavg()[0]:.2f})", flush=True)
        print("medians: first byte, bytes, parse, total (ms)")
        for python, figures in runs.items():
            medians = [statistics.median(run[i] for run in figures) for i in range(4)]
            print(f"{python}: " + ", ".join(f"{m:,.0f}" for m in medians))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m bench.load_ab PYTHON [PYTHON ...]")
    asyncio.run(main([os.path.abspath(python) for python in sys.argv[1:]]))
