"""The model that answers is the model shown, in ACP too (issue 40): asked for `gpt-4o`,
a local OpenAI-compatible server that serves SmolLM2 is named by the model option's
current entry once a turn made it known (`config_option_update`), the value the client
sets still the one asked for."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp_editor import TIMEOUT, Editor, acp, daemon
from support.small_window import SmallWindow

pytestmark = pytest.mark.e2e
SERVED = "SmolLM2-135M-Instruct-Q8_0.gguf"


def model_option(options: list) -> tuple[str, dict[str, str]]:
    (model,) = [o for o in options if o.id == "model"]
    return model.current_value, {o.value: o.name for o in model.options}


async def test_the_model_option_names_the_served_model(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    editor = Editor()
    with SmallWindow(8192, reply_chars=40, model=SERVED) as server:
        env = {
            "ELELEM_PROVIDER": "openai",
            "OPENAI_BASE_URL": f"{server.url}/v1",
            "OPENAI_MODEL": "gpt-4o",
            "OPENAI_API_KEY": "none",
        }
        async with daemon(tmp_path, editor, env=env) as (conn, _):
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            async with asyncio.timeout(TIMEOUT):
                await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
    current, names = model_option(editor.of("config_option_update")[-1].config_options)
    assert current == "gpt-4o"
    assert names["gpt-4o"] == f"{SERVED} (asked for gpt-4o)"
