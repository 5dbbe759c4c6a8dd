"""A turn's memory is bounded (issue 36): tool names, arguments and the turn's traffic
are cut or refused before anything keeps them, and a request past its cap is never
sent. The daemon runs over stdio against a greedy model (tests/support/greedy.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.greedy import CAPPED, Greedy, call, peak_kib
from support.model import reply

from elelem_daemon.jsonrpc.client import Client

from .conftest import within

pytestmark = pytest.mark.e2e
MB = 1 << 20


@pytest.fixture
def greedy() -> Iterator[Greedy]:
    server = Greedy()
    yield server
    server.stop()


async def daemon(env: dict[str, str], workdir: Path, model: Greedy, **more: str) -> Client:
    settings = {
        **env,
        "OPENAI_API_KEY": "sk-local",
        "OPENAI_BASE_URL": f"{model.url}/v1",
        "OPENAI_MODEL": "local",
        "ELELEM_RETRIES": "0",
        **more,
    }
    command = [sys.executable, "-c", CAPPED]  # exec'd: the same pid, under 1 GiB
    client = await Client.spawn(
        "--provider", "openai", command=command, env=settings, cwd=str(workdir)
    )
    await within(client.initialize())
    return client


async def test_sixty_rounds_of_a_1_mb_tool_name_end_cleanly_in_bounded_memory(
    env: dict[str, str], workdir: Path, greedy: Greedy
) -> None:
    name = "n" * MB
    asking = call(name)  # one body, queued 60 times
    greedy.queue(*[asking] * 60, reply("done"))
    client = await daemon(env, workdir, greedy)
    session = (await within(client.new_session()))["sessionId"]
    doing: list[str] = []

    def seen(event: dict) -> None:
        if event["method"] == "event/doing":
            doing.append(event["params"]["name"])

    answer = await within(client.turn(session, "go", on_event=seen), 240)
    peak = peak_kib(client.process.pid)
    print(f"peak RSS of the daemon: {peak} KiB")
    assert (answer["reply"], answer["stopReason"]) == ("done", "end_turn")
    assert len(doing) == 60 and set(doing) == {"n" * 256 + "...?"}
    tools = [m for m in greedy.sent if m["role"] == "tool"]
    assert len(tools) == 60
    read_back = json.loads(tools[-1]["content"])
    assert read_back["ok"] is False
    assert read_back["error"] == (
        f'unknown tool: "{"n" * 256}..." (a name of {MB} characters; tool names take at most 256)'
    )
    assert max(greedy.requests.sizes) < MB  # no request carries a name whole
    assert peak < 300 * 1024, f"peak RSS {peak} KiB"
    context = await within(client.context(session))
    assert len(json.dumps(context)) < 10_000  # the kept history holds none of it
    await client.close()


async def test_a_turn_whose_traffic_passes_its_cap_ends_with_a_message(
    env: dict[str, str], workdir: Path, greedy: Greedy
) -> None:
    arguments = json.dumps({"text": "a" * MB})
    greedy.queue(*[call("nothing_here", arguments)] * 3, reply("after"))
    client = await daemon(env, workdir, greedy, ELELEM_TURN_CAP=str(3 * MB))
    session = (await within(client.new_session()))["sessionId"]
    answer = await within(client.turn(session, "go"), 120)
    assert answer["stopReason"] == "max_turn_requests"
    assert answer["reply"].startswith("[stopped: this turn's tool calls and results came to ")
    assert answer["reply"].endswith(f"past ELELEM_TURN_CAP ({3 * MB}); ask for less at a time]")
    assert greedy.posts() == 3  # 1, 2 and 3 MB of traffic: the fourth would pass the cap
    assert (await within(client.turn(session, "hi")))["reply"] == "after"
    await client.close()


async def test_a_request_past_its_cap_is_never_sent(
    env: dict[str, str], workdir: Path, greedy: Greedy
) -> None:
    client = await daemon(env, workdir, greedy, ELELEM_REQUEST_CAP="50000")
    session = (await within(client.new_session()))["sessionId"]
    answer = await within(client.turn(session, "x" * 60_000))
    assert answer["stopReason"] == "max_turn_requests"
    assert "past ELELEM_REQUEST_CAP (50000): /compact" in answer["reply"]
    assert greedy.posts() == 0
    await client.close()
