"""Every message both ways checked against the ACP 1.21.0 JSON schema and the stable and
unstable schemas of @agentclientprotocol/sdk 2.4.0 (vendored in tests/acp_schema): a
session that uses each method elelem serves and each request it makes, on raw pipes,
with spec-valid client answers (support/acp_schema.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.acp_schema import Checker
from test_clients import COLOURS, text

from clients import Client, ClientRefusal

pytestmark = pytest.mark.e2e

FORMS = {"fs": {"readTextFile": True, "writeTextFile": True}, "elicitation": {"form": {}}}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# Demo\n")
    return folder


def editor(project: Path) -> dict[str, Any]:
    """A client that answers as the schema says: files, the first option, a form."""

    def read(params: dict[str, Any]) -> dict[str, str]:
        path = Path(params["path"])
        if not path.exists():
            raise ClientRefusal({"code": -32002, "message": "Resource not found"})
        return {"content": path.read_text()}

    def write(params: dict[str, Any]) -> dict[str, Any]:
        Path(params["path"]).write_text(params["content"])
        return {}

    def permission(params: dict[str, Any]) -> dict[str, Any]:
        first = params["options"][0]["optionId"]
        return {"outcome": {"outcome": "selected", "optionId": first}}

    def form(params: dict[str, Any]) -> dict[str, Any]:
        choices = params["requestedSchema"]["properties"]["answer"].get("enum") or ["noon"]
        return {"action": "accept", "content": {"answer": choices[-1]}}

    return {
        "fs/read_text_file": read,
        "fs/write_text_file": write,
        "session/request_permission": permission,
        "elicitation/create": form,
    }


async def prompt(client: Client, sid: str, line: str) -> dict[str, Any]:
    return await client.request("session/prompt", {"sessionId": sid, "prompt": text(line)})


@pytest.mark.parametrize("forms", [False, True], ids=["permissions", "elicitation"])
async def test_every_message_matches_the_acp_1_21_schema(
    home: Path, project: Path, tmp_path: Path, forms: bool
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    client = await Client.start(home, project, editor(project))
    client.checker = checker = Checker()
    capabilities: dict[str, Any] = (
        FORMS if forms else {"fs": {"readTextFile": True, "writeTextFile": True}}
    )
    init = {"protocolVersion": 1, "clientCapabilities": capabilities,
            "clientInfo": {"name": "schema", "version": "1"}}  # fmt: skip
    assert "result" in await client.request("initialize", init)
    new = await client.request(
        "session/new",
        {"cwd": str(project), "mcpServers": [], "additionalDirectories": [str(other)]},
    )
    sid = new["result"]["sessionId"]
    for line in (
        "hello",
        '!tool write {"path":"made.txt","content":"x\\n"}',
        '!tool read {"path":"README.md"}',
        '!tool execute {"command":"echo hi"}',
        COLOURS,
        '!tool interview {"question":"When?"}',
        "/undo",
        "/help",
        "",
    ):
        assert "result" in await prompt(client, sid, line)
    for method, params in (
        ("session/set_mode", {"sessionId": sid, "modeId": "plan"}),
        ("session/set_config_option", {"sessionId": sid, "configId": "mode", "value": "build"}),
        ("session/set_config_option", {"sessionId": sid, "configId": "model", "value": "m2"}),
        ("session/list", {"cwd": str(project)}),
        ("session/close", {"sessionId": sid}),
        ("session/resume", {"sessionId": sid, "cwd": str(project), "mcpServers": []}),
        ("session/close", {"sessionId": sid}),
        ("session/load", {"sessionId": sid, "cwd": str(project), "mcpServers": []}),
    ):
        answer = await client.request(method, params)
        assert "result" in answer, (method, answer)
    for method, params in (  # errors are checked too
        ("session/prompt", {"sessionId": "nope", "prompt": []}),
        ("_elelem/nothing", {}),
        (
            "session/set_config_option",
            {"sessionId": sid, "configId": "mode", "type": "boolean", "value": True},
        ),  # fmt: skip
    ):
        assert "error" in await client.request(method, params)
    await client.request("session/close", {"sessionId": sid})
    assert await client.close() == 0
    seen = {(sender, method, part) for sender, method, part in checker.checked}
    asked_by_agent = {m for s, m, p in seen if s == "agent" and p == "Request"}
    answered = {m for s, m, p in seen if s == "agent" and p == "Response"}
    assert {"fs/write_text_file", "fs/read_text_file"} <= asked_by_agent
    assert ("elicitation/create" in asked_by_agent) is forms
    assert "session/request_permission" in asked_by_agent  # a tool's permission, both ways
    assert {"initialize", "session/new", "session/prompt", "session/set_mode",
            "session/set_config_option", "session/list", "session/close",
            "session/resume", "session/load"} <= answered  # fmt: skip
    assert ("agent", "session/update", "Notification") in seen


async def test_usage_messages_match_the_schema(home: Path, project: Path) -> None:
    """A provider that reports tokens and its window: the prompt's `usage` and the
    `usage_update` (its content is the cost work's; its shape is checked here)."""
    from providers.replay import ReplayServer, Reply, json_reply

    stream = Path(__file__).parents[1] / "providers" / "streams" / "openai_text.sse"
    server = ReplayServer()
    try:
        server.routes["/props"] = json_reply(200, {"default_generation_settings": {"n_ctx": 4096}})
        server.queue(Reply([stream.read_bytes()]))
        settings = {"ELELEM_PROVIDER": "openai", "OPENAI_BASE_URL": f"{server.url}/v1"}
        client = await Client.start(home, project, **settings, OPENAI_MODEL="smol")
        client.checker = checker = Checker()
        init = {"protocolVersion": 1, "clientCapabilities": {}}
        await client.request("initialize", init)
        new = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
        sid = new["result"]["sessionId"]
        answer = await prompt(client, sid, "hi")
        assert "usage" in answer["result"]
        await client.expect("usage_update")
        assert await client.close() == 0
    finally:
        server.stop()
    assert ("agent", "session/prompt", "Response") in checker.checked
