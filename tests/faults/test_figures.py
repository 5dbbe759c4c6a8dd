"""Every number from outside is bounded (issue 36, base/figures.py): a provider's usage
counts and a server's context window are checked before any arithmetic. The daemon runs
over stdio against a local OpenAI-compatible server (tests/support/model.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from providers.replay import Reply, json_reply
from support.model import Model

from elelem_daemon.jsonrpc.client import Client

from .conftest import within

pytestmark = pytest.mark.e2e


def counted(text: str, prompt_tokens: int, completion_tokens: int = 5) -> Reply:
    """An answer saying `text` whose usage chunk reports these counts."""

    def event(data: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    return Reply(
        [
            event({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}),
            event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            event(
                {
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                    },
                }
            ),
            b"data: [DONE]\n\n",
        ]
    )


@pytest.fixture
def model() -> Iterator[Model]:
    server = Model()
    yield server
    server.stop()


async def daemon(env: dict[str, str], workdir: Path, model: Model, **more: str) -> Client:
    settings = {
        **env,
        "OPENAI_API_KEY": "sk-local",
        "OPENAI_BASE_URL": f"{model.url}/v1",
        "OPENAI_MODEL": "local",
        "ELELEM_RETRIES": "0",
        **more,
    }
    command = [sys.executable, "-m", "elelem_daemon"]
    client = await Client.spawn(
        "--provider", "openai", command=command, env=settings, cwd=str(workdir)
    )
    await within(client.initialize())
    return client


async def test_a_400_digit_usage_count_with_a_price_gives_a_normal_turn(
    env: dict[str, str], workdir: Path, model: Model
) -> None:
    (Path(env["XDG_CONFIG_HOME"]) / "elelem" / "config.toml").write_text(
        "[prices.local]\ninput = 1.0\noutput = 2.0\n"
    )
    model.queue(counted("first", 10**400), counted("second", 1000))
    client = await daemon(env, workdir, model)
    session = (await within(client.new_session()))["sessionId"]
    answer = await within(client.turn(session, "hi"))
    assert (answer["reply"], answer["stopReason"]) == ("first", "end_turn")
    answer = await within(client.turn(session, "again"))
    assert (answer["reply"], answer["stopReason"]) == ("second", "end_turn")
    cost = (await within(client.command(session, "/cost")))["output"]
    assert "turns: 2" in cost and "input: 1,000 tokens" in cost
    await client.close()


async def test_a_billion_prompt_tokens_never_make_a_turn_compact_first(
    env: dict[str, str], workdir: Path, model: Model
) -> None:
    model.queue(*[counted(f"answer {n}", 10**9) for n in range(4)])
    client = await daemon(env, workdir, model, ELELEM_CONTEXT_WINDOW="100000")
    session = (await within(client.new_session()))["sessionId"]
    for n in range(4):
        answer = await within(client.turn(session, f"question {n}"))
        assert answer["reply"] == f"answer {n}"
    assert model.posts == 4  # one request a turn: no summary was asked for
    await client.close()


@pytest.mark.parametrize("n_ctx", [1, 10**30])
async def test_an_absurd_window_from_props_is_ignored_and_said_in_model(
    env: dict[str, str], workdir: Path, model: Model, n_ctx: int
) -> None:
    model.routes["/props"] = json_reply(200, {"default_generation_settings": {"n_ctx": n_ctx}})
    model.queue(*[counted(f"answer {n}", 3000) for n in range(3)])
    client = await daemon(env, workdir, model)
    session = (await within(client.new_session()))["sessionId"]
    for n in range(3):
        answer = await within(client.turn(session, f"question {n} " + "words " * 2000))
        assert answer["reply"] == f"answer {n}"
    assert model.posts == 3  # one request a turn, never 65
    said = (await within(client.command(session, "/model")))["output"]
    lines = [line for line in said.splitlines() if "context window" in line]
    assert len(lines) == 1
    assert "ignored (set ELELEM_CONTEXT_WINDOW to give one)" in lines[0]
    assert "outside 1024..100000000" in lines[0]
    await client.close()
