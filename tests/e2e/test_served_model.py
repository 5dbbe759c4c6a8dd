"""The model that answers is the model shown (issue 40), through the real daemon on
stdio: asked for `gpt-4o`, a local OpenAI-compatible server that serves SmolLM2 (its
`/v1/models` and the `model` of its answers say so) is named in the session's
description, in `event/usage`, in `session/list` and by `/model` and `/cost`, and is
the model priced (the user's price for `gpt-4o` does not apply to it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.small_window import SmallWindow

from elelem_daemon.jsonrpc.client import Client

from .conftest import within

pytestmark = pytest.mark.e2e
SERVED = "SmolLM2-135M-Instruct-Q8_0.gguf"


@pytest.fixture
def served() -> Iterator[SmallWindow]:
    with SmallWindow(8192, reply_chars=40, model=SERVED) as server:
        yield server


async def test_the_served_model_is_named_wherever_a_model_is(
    env: dict[str, str], served: SmallWindow, workdir: Path
) -> None:
    values = {k: v for k, v in env.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    local = {**values, "OPENAI_BASE_URL": f"{served.url}/v1", "OPENAI_MODEL": "gpt-4o"}
    config = Path(env["XDG_CONFIG_HOME"]) / "elelem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[prices."gpt-4o"]\ninput = 2.5\noutput = 10.0\n')
    async with await Client.spawn("daemon", "-p", "openai", env=local, cwd=str(workdir)) as client:
        await within(client.initialize())
        session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
        result = await within(client.turn(session, "hello"), 60)
        assert result["stopReason"] == "end_turn", result
        (usage,) = [n["params"] for n in client.notifications if n["method"] == "event/usage"]
        assert usage["servedModel"] == SERVED
        listed = [s for s in await within(client.list_sessions()) if s["sessionId"] == session]
        assert len(listed) == 2  # open, and stored (`open: true`): both name it
        assert all(s["servedModel"] == SERVED and s["model"] == "gpt-4o" for s in listed)
        shown = await within(client.command(session, "/model"))
        assert f"model: {SERVED} (asked for gpt-4o)" in shown["output"]
        cost = await within(client.command(session, "/cost"))
        assert f"model: {SERVED} (served)" in cost["output"]
        assert f"cost: unknown (no price for {SERVED}" in cost["output"]
        assert "gpt-4o" not in cost["output"] and "$" not in cost["output"]
    assert served.bodies and all(body.get("model") in (None, "gpt-4o") for body in served.bodies)
