"""`/init` over the wire: the command runs a turn whose events stream as any turn's, and
the model's write of AGENTS.md (a protected path) reaches the client as an `input/ask`
permission question; denied, nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_daemon.builtins.init import INIT_PROMPT

from .conftest import within

pytestmark = pytest.mark.e2e

# A user plugin: a provider that answers the /init prompt by writing AGENTS.md.
WRITER = """
import json

class Writer:
    name = "writer"

    def __init__(self, model=None):
        self.model = "w"

    async def fetch(self, messages, tools):
        last = messages[-1]
        if last["role"] == "tool":
            said = json.loads(last["content"]).get("error", "ok")
            yield {"type": "saying", "text": "done: " + said}
            return
        assert last["content"].startswith("Write AGENTS.md")
        yield {"type": "doing", "id": "w1", "name": "write",
               "arguments": {"path": "AGENTS.md", "content": "# Agents\\n"}}

def register(plugin):
    plugin.provider("writer", Writer)
"""


async def test_init_streams_a_turn_and_the_write_is_asked_not_done(
    spawn, env: dict[str, str], workdir: Path
) -> None:
    plugins = Path(env["HOME"]) / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "writer.py").write_text(WRITER)
    asked: list[dict] = []
    client = await spawn(on_ask=lambda params: asked.append(params) or "deny")
    await within(client.initialize())
    session = (await within(client.new_session(provider="writer")))["sessionId"]
    answer = await within(client.command(session, "/init"), 30)
    assert "error" not in answer["output"]
    (question,) = asked
    assert question["kind"] == "permission" and question["tool"]["name"] == "write"
    assert "AGENTS.md" in question["prompt"]
    methods = [n["method"] for n in client.notifications]
    assert "event/doing" in methods and "event/result" in methods
    assert not (workdir / "AGENTS.md").exists()
    messages = await within(client.context(session))
    assert messages[1] == {"role": "user", "content": INIT_PROMPT}
    assert messages[2]["content"].startswith("done: User denied permission: write")
