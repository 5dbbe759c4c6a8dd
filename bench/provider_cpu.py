"""The provider path in one process: CPU time per chunk of each layer (issue 22).

`python bench/provider_cpu.py [STAGE ...]` starts `servers/sse.py`, then streams N
chunks (`N`, default 20,000) with no gap through each stage named, `R` rounds each
(default 5), stages alternating, and prints each stage's median CPU time per chunk
(`time.process_time`: this process only, the server not counted) and the load average:

    stream  httpx's lowest public reader: `response.stream`, nothing done with the bytes
    raw     `response.aiter_raw()` (what providers/lines.py reads)
    prov    the `openai` provider's `fetch`: lines, SSE, JSON, its events
    full    an `Agent` turn whose Output is the daemon face's `Events`, through
            `StdioPeer`, `ElelemProtocol.notify` and `Stdout` to /dev/null
    relay   `servers/relay.py`'s loop (its own chunked reader), frames to /dev/null

Default: `prov full relay`. `PROFILE=FILE` writes a cProfile of one `full` run instead.
The script imports `elelem_daemon` from the interpreter's environment, not from
beside it: run it with another checkout's `.venv/bin/python` (from outside either
checkout) for an A/B of the same stages.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

SERVERS = Path(__file__).resolve().parent / "servers"
N = int(os.environ.get("N", "20000"))
R = int(os.environ.get("R", "5"))


async def main(stages: list[str]) -> None:
    from pygls.server import JsonRPCServer

    from elelem_daemon.agent import Agent
    from elelem_daemon.faces.daemon.events import Events
    from elelem_daemon.faces.daemon.protocol import ElelemProtocol, Framed, converter_factory
    from elelem_daemon.faces.daemon.stdio import StdioPeer, Stdout
    from elelem_daemon.providers.openai import OpenAIProvider

    sys.path.insert(0, str(SERVERS))
    import relay as relaying  # type: ignore[import-not-found]

    server_proc = await asyncio.create_subprocess_exec(
        sys.executable, str(SERVERS / "sse.py"), stdout=asyncio.subprocess.PIPE
    )
    assert server_proc.stdout is not None
    port = int(await server_proc.stdout.readline())
    url = f"http://127.0.0.1:{port}/v1"
    devnull = open(os.devnull, "wb")  # noqa: SIM115 (lives as long as the script)
    provider = OpenAIProvider("bench", base_url=url, api_key="bench")
    rpc = JsonRPCServer(ElelemProtocol, converter_factory)
    rpc.protocol.set_writer(Framed(Stdout(devnull, lambda: None)))
    peer = StdioPeer(asyncio.get_running_loop().create_future(), rpc.protocol)
    events = Events(peer)
    events.session_id, events.turn_id = "s", 1
    agent = Agent(provider, output=events)
    relaying.OUT = devnull
    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": f"{N} 0"}]}

    async def stream() -> None:
        async with provider.client.stream("POST", f"{url}/chat/completions", json=body) as r:
            async for _ in r.stream:  # type: ignore[union-attr]
                pass

    async def raw() -> None:
        async with provider.client.stream("POST", f"{url}/chat/completions", json=body) as r:
            async for _ in r.aiter_raw():
                pass

    async def prov() -> None:
        said = 0
        async for event in provider.fetch([{"role": "user", "content": f"{N} 0"}], []):
            said += event["type"] == "saying"
        assert said == N, said

    async def full() -> None:
        result = await agent.turn(f"{N} 0", keep=False)
        assert result.stop_reason == "end_turn", result

    async def relay() -> None:
        await relaying.relay(port, N, 0)

    runs = {"stream": stream, "raw": raw, "prov": prov, "full": full, "relay": relay}
    await prov()  # warm-up: the connection pool, the imports
    if profile := os.environ.get("PROFILE"):
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
        await full()
        profiler.disable()
        profiler.dump_stats(profile)
    else:
        spent: dict[str, list[float]] = {stage: [] for stage in stages}
        for _ in range(R):
            for stage in stages:
                start = time.process_time()
                await runs[stage]()
                spent[stage].append((time.process_time() - start) / N * 1e6)
        for stage, figures in spent.items():
            figures.sort()
            shown = " ".join(f"{f:.1f}" for f in figures)
            print(f"{stage:6} {figures[len(figures) // 2]:6.1f} µs/chunk  ({shown})")
        print(f"load {os.getloadavg()[0]:.2f}")
    await provider.aclose()
    server_proc.terminate()
    await server_proc.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ["prov", "full", "relay"]))
