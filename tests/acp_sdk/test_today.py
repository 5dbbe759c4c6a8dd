"""Today's ACP (issue 38), on raw pipes, every message checked against ACP 1.21 and the
stable and unstable schemas of @agentclientprotocol/sdk 2.4.0: a session's title
(`session_info_update`), `session/delete`, `session/fork`, the client's
`systemPrompt`, message ids, the `auto_compact` switch, `logout`, one code for an
unknown session, and steering advertised the way clients read it."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.acp_schema import ALL, SDK_STABLE, SDK_UNSTABLE, Checker
from test_clients import text

from clients import Client

pytestmark = pytest.mark.e2e
BOOLEANS = {"session": {"configOptions": {"boolean": {}}}}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def yes(params: dict[str, Any]) -> dict[str, Any]:
    first = params["options"][0]["optionId"]
    return {"outcome": {"outcome": "selected", "optionId": first}}


async def started(
    home: Path, project: Path, schemas: tuple[str, ...] = ALL, **env: str
) -> tuple[Client, dict[str, Any]]:
    client = await Client.start(home, project, {"session/request_permission": yes}, **env)
    client.checker = Checker(schemas)
    capabilities = BOOLEANS if SDK_STABLE in schemas and len(schemas) < 3 else {}
    init = await client.request(
        "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
    )
    return client, init["result"]


async def new(client: Client, project: Path, **more: Any) -> str:
    answer = await client.request("session/new", {"cwd": str(project), "mcpServers": [], **more})
    assert "result" in answer, answer
    return str(answer["result"]["sessionId"])


async def prompt(client: Client, sid: str, line: str) -> dict[str, Any]:
    answer = await client.request("session/prompt", {"sessionId": sid, "prompt": text(line)})
    assert "result" in answer, answer
    return answer["result"]


def stored(home: Path, sid: str) -> Path:
    return home / ".local" / "state" / "elelem" / "sessions" / f"{sid}.jsonl"


async def test_initialize_advertises_the_new_methods_and_steering(
    home: Path, project: Path
) -> None:
    client, init = await started(home, project)
    capabilities = init["agentCapabilities"]
    session = capabilities["sessionCapabilities"]
    assert {"list", "resume", "close", "delete", "fork", "additionalDirectories"} <= set(session)
    assert session["systemPrompt"] == {"mode": {"override": {}}}
    assert capabilities["auth"] == {"logout": {}} and init["authMethods"] == []
    assert capabilities["_meta"]["claudeCode"] == {"promptQueueing": True}
    sid = await new(client, project)
    commands = (await client.expect("available_commands_update"))[-1]["availableCommands"]
    assert "steer" not in {c["name"] for c in commands}  # it can never work over ACP
    assert (await client.request("logout", {}))["result"] == {}
    assert client.checker is not None
    assert (SDK_STABLE, "logout", "Response") in client.checker.by_schema
    await client.request("session/close", {"sessionId": sid})
    assert await client.close() == 0


async def test_a_prompt_titles_the_session_and_a_rewind_or_compact_retitles_it(
    home: Path, project: Path
) -> None:
    client, _ = await started(home, project)
    sid = await new(client, project)
    await prompt(client, sid, "Fix the parser\nand its tests")
    (titled,) = client.of("session_info_update")
    assert titled["title"] == "Fix the parser" and titled["updatedAt"]
    await prompt(client, sid, "then the lexer")
    assert len(client.of("session_info_update")) == 1  # the same title: not said again
    await prompt(client, sid, "/compact")
    compacted = client.of("session_info_update")
    assert len(compacted) == 2 and compacted[-1]["title"] not in (None, "Fix the parser")
    await prompt(client, sid, "/rewind 1")  # before the first turn: no title any more
    assert client.of("session_info_update")[-1]["title"] is None
    chunks = [u for u in client.updates if u["sessionUpdate"].endswith("_chunk")]
    assert chunks and all(isinstance(u["messageId"], str) for u in chunks)
    await client.request("session/close", {"sessionId": sid})
    assert await client.close() == 0


async def test_message_ids_change_with_each_message(home: Path, project: Path) -> None:
    client, _ = await started(home, project)
    sid = await new(client, project)
    await prompt(client, sid, "hello")  # the stub says, calls a tool, says again
    first = [u["messageId"] for u in client.of("agent_message_chunk")]
    mark = len(client.updates)
    await prompt(client, sid, "hello")
    second = {u["messageId"] for u in client.of("agent_message_chunk", mark)}
    assert len(first) == len(set(first)) == 2 and not second & set(first)
    await client.request("session/close", {"sessionId": sid})
    mark = len(client.updates)
    await client.request("session/load", {"sessionId": sid, "cwd": str(project), "mcpServers": []})
    replayed = [u for u in client.updates[mark:] if u["sessionUpdate"].endswith("_chunk")]
    assert len({u["messageId"] for u in replayed}) == len(replayed) >= 4  # one per message
    assert await client.close() == 0


async def test_delete_removes_the_session_from_the_list_and_the_disk(
    home: Path, project: Path
) -> None:
    client, _ = await started(home, project)
    sid, other = await new(client, project), await new(client, project)
    await prompt(client, sid, "keep me not")
    assert stored(home, sid).is_file()
    assert (await client.request("session/delete", {"sessionId": sid}))["result"] == {}
    listed = (await client.request("session/list", {}))["result"]["sessions"]
    assert [s["sessionId"] for s in listed] == [other]
    assert not stored(home, sid).exists()
    await client.request("session/close", {"sessionId": other})  # closed, still stored
    assert (await client.request("session/delete", {"sessionId": other}))["result"] == {}
    assert (await client.request("session/list", {}))["result"]["sessions"] == []
    assert client.checker is not None
    for schema in (SDK_STABLE, SDK_UNSTABLE):
        assert (schema, "session/delete", "Response") in client.checker.by_schema
    for method in ("session/delete", "session/close", "session/resume", "session/load"):
        params = {"sessionId": sid, "cwd": str(project), "mcpServers": []}
        error = (await client.request(method, params))["error"]
        assert (error["code"], error["data"]["kind"]) == (-32002, "unknown_session"), method
    for hostile in ("../../etc/passwd", "x" * 5000, ""):
        error = (await client.request("session/delete", {"sessionId": hostile}))["error"]
        assert error["code"] == -32002
    assert await client.close() == 0


async def test_a_fork_has_the_history_and_loads_in_a_new_process(home: Path, project: Path) -> None:
    client, _ = await started(home, project)
    sid = await new(client, project)
    await prompt(client, sid, "the original question")
    forked = await client.request(
        "session/fork", {"sessionId": sid, "cwd": str(project), "mcpServers": []}
    )
    fork = forked["result"]["sessionId"]
    assert client.checker is not None
    assert (SDK_UNSTABLE, "session/fork", "Response") in client.checker.by_schema
    assert fork != sid and forked["result"]["modes"]["currentModeId"] == "build"
    await prompt(client, fork, "only in the fork")
    listed = {
        s["sessionId"] for s in (await client.request("session/list", {}))["result"]["sessions"]
    }
    assert {sid, fork} <= listed
    missing = await client.request(
        "session/fork", {"sessionId": "nope", "cwd": str(project), "mcpServers": []}
    )
    assert missing["error"]["code"] == -32002
    client.checker = None  # a relative cwd breaks nothing but the schema's wording
    relative = await client.request(
        "session/fork", {"sessionId": sid, "cwd": "project", "mcpServers": []}
    )
    assert relative["error"]["code"] == -32602
    sessions = home / ".local" / "state" / "elelem" / "sessions"
    assert len(list(sessions.iterdir())) == 2  # nothing copied for a refused fork
    client.next_id += 1  # a fork of a session mid-turn is refused busy
    sleep = text('!tool execute {"command": "sleep 600"}')
    running = {"jsonrpc": "2.0", "id": client.next_id, "method": "session/prompt",
               "params": {"sessionId": sid, "prompt": sleep}}  # fmt: skip
    await client.line(json.dumps(running) + "\n")
    await client.expect("tool_call", len(client.of("tool_call")) + 1)
    busy = await client.request(
        "session/fork", {"sessionId": sid, "cwd": str(project), "mcpServers": []}
    )
    assert (busy["error"]["code"], busy["error"]["data"]["kind"]) == (-32001, "session_busy")
    await client.line(json.dumps({"jsonrpc": "2.0", "method": "session/cancel",
                                  "params": {"sessionId": sid}}) + "\n")  # fmt: skip
    assert await client.close() == 0

    again, _ = await started(home, project)  # a new process
    mark = len(again.updates)
    load = {"sessionId": fork, "cwd": str(project), "mcpServers": []}
    assert "result" in await again.request("session/load", load)
    said = again.text(mark, "user_message_chunk")
    assert "the original question" in said and "only in the fork" in said
    await again.request("session/close", {"sessionId": fork})
    assert "result" in await again.request("session/resume", load)
    mark = len(again.updates)
    await again.request("session/load", {**load, "sessionId": sid})
    assert "only in the fork" not in again.text(mark, "user_message_chunk")  # apart
    assert await again.close() == 0


async def test_system_prompt_is_checked(home: Path, project: Path) -> None:
    client, _ = await started(home, project)
    for bad in (
        {"mode": "replace", "content": [{"type": "text", "text": "x"}]},
        {"mode": "append", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]},
        {"mode": "append", "content": [{"type": "text", "text": "x"}] * 65},
        {"mode": "append", "content": [{"type": "text", "text": "x" * (256 * 1024 + 1)}]},
    ):
        params = {"cwd": str(project), "mcpServers": [], "systemPrompt": bad}
        client.checker = None  # these break the schema on purpose
        error = (await client.request("session/new", params))["error"]
        assert error["code"] == -32602 and "systemPrompt" in error["message"]
    assert (await client.request("session/list", {}))["result"]["sessions"] == []
    assert await client.close() == 0


async def test_auto_compact_is_a_boolean_option_for_clients_that_take_them(
    home: Path, project: Path
) -> None:
    client, _ = await started(home, project, (SDK_STABLE, SDK_UNSTABLE))
    answer = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
    sid = answer["result"]["sessionId"]
    (switch,) = [o for o in answer["result"]["configOptions"] if o["id"] == "auto_compact"]
    assert (switch["type"], switch["currentValue"]) == ("boolean", True)
    params = {"sessionId": sid, "configId": "auto_compact", "type": "boolean", "value": False}
    options = (await client.request("session/set_config_option", params))["result"]
    (switch,) = [o for o in options["configOptions"] if o["id"] == "auto_compact"]
    assert switch["currentValue"] is False
    wrong = {"sessionId": sid, "configId": "auto_compact", "value": "no"}
    assert (await client.request("session/set_config_option", wrong))["error"]["code"] == -32602
    assert await client.close() == 0

    plain, _ = await started(home, project)  # no booleans declared: none offered
    answer = await plain.request("session/new", {"cwd": str(project), "mcpServers": []})
    assert "auto_compact" not in {o["id"] for o in answer["result"]["configOptions"]}
    assert await plain.close() == 0


async def test_a_cancelled_tool_call_is_replayed_as_cancelled(home: Path, project: Path) -> None:
    client, _ = await started(home, project)
    sid = await new(client, project)
    line = '!tool execute {"command":"sleep 600"}'
    client.next_id += 1
    ident = client.next_id
    request = {"jsonrpc": "2.0", "id": ident, "method": "session/prompt",
               "params": {"sessionId": sid, "prompt": text(line)}}  # fmt: skip
    await client.line(json.dumps(request) + "\n")
    await client.expect("tool_call")
    await client.line(
        json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        + "\n"
    )
    while (await client.read()).get("id") != ident:
        pass
    await client.request("session/close", {"sessionId": sid})
    mark = len(client.updates)
    load = {"sessionId": sid, "cwd": str(project), "mcpServers": []}
    await asyncio.wait_for(client.request("session/load", load), 60)
    (ended,) = client.of("tool_call_update", mark)
    assert ended["status"] == "failed" and ended["rawOutput"]["error"] == "cancelled"
    assert await client.close() == 0
    assert os.path.exists(stored(home, sid))


async def test_an_appended_system_prompt_reaches_the_model_after_a_stable_prefix(
    home: Path, project: Path
) -> None:
    """A recording fake server: the client's text ends the system prompt; the bytes
    before it are those of a session without it, and the same on the next request."""
    from providers.replay import ReplayServer, Reply

    reply = (Path(__file__).parents[1] / "providers" / "streams" / "openai_text.sse").read_bytes()
    server = ReplayServer()
    try:
        server.queue(*(Reply([reply]) for _ in range(4)))
        settings = {"ELELEM_PROVIDER": "openai", "OPENAI_BASE_URL": f"{server.url}/v1"}
        client, _ = await started(home, project, **settings, OPENAI_MODEL="smol")
        plain = await new(client, project)
        rules = "CLIENT RULES: answer in French."
        appended = await new(
            client,
            project,
            systemPrompt={"mode": "append", "content": [{"type": "text", "text": rules}]},
        )
        await prompt(client, plain, "hi")
        await prompt(client, appended, "hi")
        await prompt(client, appended, "hi again")
        override = {"mode": "override", "content": [{"type": "text", "text": "You are Bob."}]}
        await client.request(
            "session/resume",
            {"sessionId": plain, "cwd": str(project), "mcpServers": [], "systemPrompt": override},
        )
        await prompt(client, plain, "who?")
        assert await client.close() == 0
    finally:
        server.stop()
    bodies = [r.body for r in server.requests]
    systems = [r.json["messages"][0]["content"] for r in server.requests]
    base, first, second, bob = systems
    assert first == f"{base}\n\n{rules}" and second == first  # byte-stable for the session
    # the request bytes from the messages on (each session has its own cache key before)
    sent = [body[body.index(b'"messages"') :] for body in bodies]
    encoded = json.dumps(base, ensure_ascii=False)[:-1].encode()  # without its closing quote
    assert encoded in sent[0] and encoded in sent[1]
    end = sent[0].index(encoded) + len(encoded)
    assert sent[0][:end] == sent[1][:end]  # elelem's prompt: the same bytes, then the client's
    assert bob.startswith("You are Bob.") and "coding agent" not in bob
