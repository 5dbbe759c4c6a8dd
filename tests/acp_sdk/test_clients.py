"""What real ACP clients found (issue 15), replayed with their exact messages on raw pipes:
codecompanion.nvim with the README's config, avante.nvim and acpx (clients.py says
where each shape comes from)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clients import Client, ClientRefusal, fences_balanced

pytestmark = pytest.mark.e2e

CODECOMPANION = {  # adapters/acp/goose.lua's parameters, which the README's config extends
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}},
    "clientInfo": {"name": "CodeCompanion.nvim", "version": "1.0.0"},
}
AVANTE = {  # acp_client.lua: protocol_version and its fs capabilities, no clientInfo
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}},
}
ACPX = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
    "clientInfo": {"name": "acpx", "version": "0.1.0"},
}
COLOURS = '!tool interview {"question":"Which colour?","options":["red","blue","green"]}'


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


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def buffers(project: Path) -> dict[str, Any]:
    """codecompanion's fs handlers: a missing file reads as empty, a write answers null."""

    def read(params: dict[str, Any]) -> dict[str, str]:
        path = Path(params["path"])
        return {"content": path.read_text() if path.exists() else ""}

    def write(params: dict[str, Any]) -> None:
        Path(params["path"]).write_text(params["content"])
        return None  # codecompanion: send_result(id, vim.NIL)

    return {"fs/read_text_file": read, "fs/write_text_file": write}


def by_kind(kind: str) -> Any:
    """A client that answers a permission request by the option's kind, as codecompanion's
    keymaps and avante's yes/all/no do; None: no such option, so no optionId is sent."""

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        ids = [o["optionId"] for o in params["options"] if o["kind"] == kind]
        outcome: dict[str, Any] = {"outcome": "selected"}
        if ids:
            outcome["optionId"] = ids[-1]  # vim.json.encode drops a nil optionId
        return {"outcome": outcome}

    return answer


async def test_codecompanion_survives_compact_then_another_message(
    home: Path, project: Path
) -> None:
    """Done when (issue 15): /compact's output is its own chunk, fences stay balanced in
    the chat buffer, the next message (and codecompanion's empty prompt) are answered,
    and reopening the session shows no fake reply."""
    client = await Client.start(home, project, buffers(project))
    assert "result" in await client.request("initialize", CODECOMPANION)
    new = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
    sid = new["result"]["sessionId"]
    first = await client.request("session/prompt", {"sessionId": sid, "prompt": text("Hi!")})
    assert first["result"]["stopReason"] == "end_turn"
    (commands,) = client.of("available_commands_update")
    names = [c["name"] for c in commands["availableCommands"]]
    assert "compact" in names and "exit" not in names  # `\compact` becomes `/compact`

    mark = len(client.updates)
    compact = await client.request("session/prompt", {"sessionId": sid, "prompt": text("/compact")})
    assert compact["result"] == {"stopReason": "end_turn"}
    shown = client.text(mark)
    assert shown.endswith(
        "done.\n\n```\n  → compacted: 2 messages became 1\n```"
    )  # not `done.```…`
    assert fences_balanced(client.text())  # the chat's next `## Me` is not in a code block

    mark = len(client.updates)
    after = await client.request(
        "session/prompt", {"sessionId": sid, "prompt": text("!echo still here")}
    )
    assert after["result"] == {"stopReason": "end_turn"} and client.text(mark) == "still here"
    mark = len(client.updates)
    empty = await client.request("session/prompt", {"sessionId": sid, "prompt": []})
    assert empty["result"] == {"stopReason": "end_turn"}  # nothing done, one chunk said
    assert client.text(mark) == "(an empty message: nothing to do)"  # so its `## Me` returns
    assert await client.close() == 0

    again = await Client.start(home, project, buffers(project))
    await again.request("initialize", CODECOMPANION)
    load = {"cwd": str(project), "mcpServers": [], "sessionId": sid}
    assert "result" in await again.request("session/load", load)
    replayed = again.text(kind="user_message_chunk") + again.text()
    # the whole transcript: the turn before the compaction, its marker, after; the summary
    # is the model's to read, not a message the user wrote
    assert replayed.startswith("Hi!!echo still here") and "still here" in replayed
    assert "Context: " not in replayed
    assert "context compacted here" in replayed
    assert "[interrupted]" not in replayed
    stored = home / ".local" / "state" / "elelem" / "sessions" / f"{sid}.jsonl"
    assert "[interrupted]" not in stored.read_text()
    mark = len(again.updates)
    more = await again.request("session/prompt", {"sessionId": sid, "prompt": text("!echo on")})
    assert more["result"]["stopReason"] == "end_turn" and again.text(mark) == "on"
    await again.close()


async def test_codecompanion_draws_each_choice_apart(home: Path, project: Path) -> None:
    """codecompanion keys the options by kind (Accept, Always accept, Reject): the user's
    "Always accept" is the second choice."""
    answers = {**buffers(project), "session/request_permission": by_kind("allow_always")}
    client = await Client.start(home, project, answers)
    await client.request("initialize", CODECOMPANION)
    sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"][
        "sessionId"
    ]
    await client.request("session/prompt", {"sessionId": sid, "prompt": text(COLOURS)})
    (asked,) = [m["params"] for m in client.asked if m["method"] == "session/request_permission"]
    options = [(o["optionId"], o["name"], o["kind"]) for o in asked["options"]]
    assert options == [
        ("choice-1", "red", "allow_once"),
        ("choice-2", "blue", "allow_always"),
        ("choice-3", "green", "reject_once"),
    ]
    assert len({kind for _, _, kind in options}) == 3
    assert asked["toolCall"]["title"] == (
        "Which colour? Accept = red, Always accept = blue, Reject = green"
    )
    assert asked["toolCall"]["content"][-1]["content"]["text"].endswith("1. red\n2. blue\n3. green")
    (done,) = client.of("tool_call_update")
    assert done["rawOutput"] == {"answer": "blue", "ok": True}
    await client.close()


async def test_avante_answering_without_an_option_id_is_no_answer(
    home: Path, project: Path
) -> None:
    """avante's "no" is its reject_once option: a question has none, so the answer comes
    without an optionId. The model reads that the user gave no answer."""
    answers = {**buffers(project), "session/request_permission": by_kind("reject_once")}
    client = await Client.start(home, project, answers)
    await client.request("initialize", AVANTE)
    sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"][
        "sessionId"
    ]
    two = '!tool interview {"question":"Go on?","options":["yes","no"]}'
    answer = await client.request("session/prompt", {"sessionId": sid, "prompt": text(two)})
    assert answer["result"]["stopReason"] == "end_turn"
    (permission,) = [m for m in client.asked if m["method"] == "session/request_permission"]
    assert "reject_once" not in [o["kind"] for o in permission["params"]["options"]]
    (done,) = client.of("tool_call_update")
    assert done["status"] == "failed"
    assert done["rawOutput"] == {"error": "the user gave no answer", "ok": False}
    await client.close()


async def test_avante_approving_every_permission_leaves_a_folders_plugin_unloaded(
    home: Path, project: Path
) -> None:
    """Issue 29: avante approves every permission request by default (allow_once, at
    once). Folder trust is not one: the folder's plugin stays unloaded, the chat says so
    once, and `/trust` typed by the user loads it."""
    plugins = project / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    spy = plugins / "spy.py"
    spy.write_text(
        "from pathlib import Path\n\nPath(__file__).with_suffix('.ran').touch()\n\n\n"
        "def register(plugin):\n    pass\n"
    )
    answers = {**buffers(project), "session/request_permission": by_kind("allow_once")}
    client = await Client.start(home, project, answers)
    await client.request("initialize", AVANTE)
    sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"][
        "sessionId"
    ]
    run = text('!tool execute {"command": "echo asked"}')  # a question avante approves
    answer = await client.request("session/prompt", {"sessionId": sid, "prompt": run})
    assert answer["result"]["stopReason"] == "end_turn"
    assert [m for m in client.asked if m["method"] == "session/request_permission"]
    assert not spy.with_suffix(".ran").exists()
    said = "".join(u["content"]["text"] for u in client.of("agent_message_chunk"))
    assert "is not trusted" in said and ".agents/plugins/spy.py" in said
    await client.request("session/prompt", {"sessionId": sid, "prompt": text("/trust")})
    assert spy.with_suffix(".ran").exists()
    await client.close()


async def test_acpx_reuses_a_session_from_a_second_process(home: Path, project: Path) -> None:
    """`acpx sessions new` creates a session and exits; the next `acpx` prompt loads it
    in a new agent process. A session is stored when it is created, so that works, and
    session/list shows what session/load opens."""
    first = await Client.start(home, project)
    await first.request("initialize", ACPX)
    sid = (await first.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"][
        "sessionId"
    ]
    listed_here = await first.request("session/list", {"cwd": str(project)})
    assert [s["sessionId"] for s in listed_here["result"]["sessions"]] == [sid]
    assert await first.close() == 0

    second = await Client.start(home, project)
    await second.request("initialize", ACPX)
    listed = await second.request("session/list", {"cwd": str(project)})
    (entry,) = listed["result"]["sessions"]
    assert entry["sessionId"] == sid and entry["_meta"]["elelem"]["open"] is False
    load = {"sessionId": sid, "cwd": str(project), "mcpServers": []}
    loaded = await second.request("session/load", load)
    assert "error" not in loaded, loaded
    said = await second.request(
        "session/prompt", {"sessionId": sid, "prompt": text("!echo reused")}
    )
    assert said["result"]["stopReason"] == "end_turn"
    assert second.text() == "reused"
    listed = await second.request("session/list", {})
    (entry,) = listed["result"]["sessions"]  # once: open here, and stored
    assert entry["title"] == "!echo reused" and entry["_meta"]["elelem"]["open"] is True
    unknown = await second.request("session/load", {**load, "sessionId": "f" * 32})
    assert unknown["error"]["code"] == -32002  # ACP's resource not found
    await second.close()


async def test_set_mode_and_set_config_option_send_the_same_updates(
    home: Path, project: Path
) -> None:
    client = await Client.start(home, project)
    await client.request("initialize", ACPX)
    new = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
    sid = new["result"]["sessionId"]
    mode, provider, model = new["result"]["configOptions"]
    assert (mode["id"], mode["category"]) == ("mode", "mode")  # avante's mode picker
    assert (provider["id"], model["category"]) == ("provider", "model")
    sent = []
    for method, params in (
        ("session/set_mode", {"sessionId": sid, "modeId": "plan"}),
        ("session/set_config_option", {"sessionId": sid, "configId": "mode", "value": "verify"}),
        ("session/set_config_option", {"sessionId": sid, "configId": "provider", "value": "stub"}),
        ("session/set_config_option", {"sessionId": sid, "configId": "model", "value": "m2"}),
    ):
        mark = len(client.updates)
        assert "result" in await client.request(method, params)
        kinds = [u["sessionUpdate"] for u in client.updates[mark:]]
        sent.append([k for k in kinds if k != "available_commands_update"])  # session/new's
    both = ["current_mode_update", "config_option_update"]
    assert sent == [both, both, ["config_option_update"], ["config_option_update"]]
    assert client.of("current_mode_update")[-1]["currentModeId"] == "verify"  # acpx: `mode:`
    await client.close()


async def test_tool_calls_show_what_runs(home: Path, project: Path) -> None:
    """claude-agent-acp's titles, with the tool's kind, its locations and rawInput."""
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    answers = {**buffers(project), "session/request_permission": by_kind("allow_once")}
    client = await Client.start(home, project, answers)
    await client.request("initialize", CODECOMPANION)
    sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"][
        "sessionId"
    ]
    calls = [
        ('execute {"command":"ls -la"}', "`ls -la`", "execute"),
        ('read {"path":"README.md"}', "Read `README.md`", "read"),
        ('write {"path":"notes.txt","content":"n\\n"}', "Write `notes.txt`", "edit"),
        ('edit {"path":"src/app.py","old":"1","new":"2"}', "Edit `src/app.py`", "edit"),
        ('list {"path":"src"}', "List `src`", "search"),
        ('glob {"pattern":"**/*.py"}', "Find `**/*.py`", "search"),
        ('grep {"pattern":"x = `y`","path":"src"}', "Search `` x = `y` `` in `src`", "search"),
    ]
    for call, _, _ in calls:
        await client.request("session/prompt", {"sessionId": sid, "prompt": text(f"!tool {call}")})
    started = client.of("tool_call")
    assert [(u["title"], u["kind"]) for u in started] == [(t, k) for _, t, k in calls]
    assert started[0]["rawInput"] == {"command": "ls -la"}
    assert started[1]["locations"] == [{"path": str(project / "README.md")}]
    assert started[3]["locations"] == [{"path": str(project / "src" / "app.py")}]
    read = client.of("tool_call_update")[1]
    assert read["content"][0]["content"]["text"] == "```\n# Demo\n```"  # no blank line after it
    await client.close()


async def test_an_editors_refusal_of_a_file_request_is_passed_on(home: Path, project: Path) -> None:
    """The TypeScript SDK answers a failing handler with `Internal error` and the reason in
    `data.details`: both reach the model."""

    def refuse(params: dict[str, Any]) -> None:
        raise ClientRefusal(
            {"code": -32603, "message": "Internal error", "data": {"details": "EACCES: denied"}}
        )

    answers = {"fs/read_text_file": refuse, "fs/write_text_file": refuse}
    client = await Client.start(home, project, answers)
    await client.request("initialize", CODECOMPANION)
    sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"][
        "sessionId"
    ]
    for call in ('read {"path":"README.md"}', 'write {"path":"new.txt","content":"x"}'):
        await client.request("session/prompt", {"sessionId": sid, "prompt": text(f"!tool {call}")})
    read, wrote = client.of("tool_call_update")
    where = project / "README.md"
    assert read["rawOutput"]["error"] == (
        f"the editor could not read {where}: Internal error (EACCES: denied)"
    )
    assert wrote["rawOutput"]["error"].endswith(": Internal error (EACCES: denied)")
    await client.close()


async def test_over_acp_help_and_the_system_prompt_say_where_the_agent_is(
    home: Path, project: Path
) -> None:
    client = await Client.start(home, project)
    await client.request("initialize", AVANTE)
    sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"][
        "sessionId"
    ]
    await client.request("session/prompt", {"sessionId": sid, "prompt": text("/help")})
    helped = client.text()
    assert "/compact" in helped and "/exit" not in helped
    mark = len(client.updates)
    await client.request("session/prompt", {"sessionId": sid, "prompt": text("/context")})
    context = client.text(mark)
    assert "system: You are a coding agent working in the user's code editor." in context
    assert "terminal coding agent" not in context
    mark = len(client.updates)
    await client.request("session/prompt", {"sessionId": sid, "prompt": text("/exit")})
    assert "close it in the editor" in client.text(mark)  # hidden, yet answered
    await client.close()


async def test_stub_errors_say_how_to_write_the_script(home: Path, project: Path) -> None:
    client = await Client.start(home, project)
    await client.request("initialize", AVANTE)
    sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"][
        "sessionId"
    ]
    answer = await client.request(
        "session/prompt", {"sessionId": sid, "prompt": text("!tool read {oops")}
    )
    assert answer["result"]["_meta"]["elelem"]["stopReason"] == "error"
    said = client.text()
    assert said.startswith("error: stub: !tool takes a tool name and a JSON object")
    assert "Expecting" not in said and "line 1 column" not in said
    await client.close()


async def test_usage_update_when_the_provider_reports_tokens(home: Path, project: Path) -> None:
    """A llama.cpp-like server: its `/props` gives the window, its stream the token counts."""
    from providers.replay import ReplayServer, Reply, json_reply

    stream = Path(__file__).parents[1] / "providers" / "streams" / "openai_text.sse"
    server = ReplayServer()
    try:
        server.routes["/props"] = json_reply(200, {"default_generation_settings": {"n_ctx": 4096}})
        server.queue(Reply([stream.read_bytes()]), Reply([stream.read_bytes()]))
        settings = {"ELELEM_PROVIDER": "openai", "OPENAI_BASE_URL": f"{server.url}/v1"}
        client = await Client.start(home, project, **settings, OPENAI_MODEL="smol")
        await client.request("initialize", CODECOMPANION)
        sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))[
            "result"
        ]["sessionId"]
        answer = await client.request("session/prompt", {"sessionId": sid, "prompt": text("hi")})
        assert answer["result"]["usage"] == {
            "inputTokens": 530,
            "outputTokens": 9,
            "totalTokens": 539,
        }
        (usage,) = await client.expect("usage_update")  # the lookup ran beside the turn
        assert usage == {"sessionUpdate": "usage_update", "used": 539, "size": 4096}
        assert [r.path for r in server.gets] == ["/props", "/v1/models"]  # once
        await client.request("session/prompt", {"sessionId": sid, "prompt": text("again")})
        assert len(await client.expect("usage_update", 2)) == 2
        assert [r.path for r in server.gets] == ["/props", "/v1/models"]
        await client.close()
    finally:
        server.stop()


async def test_usage_update_carries_the_sessions_cost_and_the_cache(
    home: Path, project: Path
) -> None:
    """A price in config.toml (turns/usage.py): `usage_update.cost` sums the session, and the
    answer's usage says the cache's share; both as the ACP SDK's schema reads them."""
    from acp.schema import PromptResponse, UsageUpdate
    from providers.replay import ReplayServer, json_reply
    from providers.test_prompt_cache import openai_reply

    config = home / ".config" / "elelem"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[prices.smol]\ninput = 10\noutput = 20\ncache_read = 1\n")
    counts = {
        "prompt_tokens": 1000,
        "completion_tokens": 50,
        "prompt_tokens_details": {"cached_tokens": 800},
    }
    server = ReplayServer()
    try:
        server.routes["/props"] = json_reply(200, {"default_generation_settings": {"n_ctx": 4096}})
        server.queue(openai_reply("one", counts), openai_reply("two", counts))
        settings = {"ELELEM_PROVIDER": "openai", "OPENAI_BASE_URL": f"{server.url}/v1"}
        client = await Client.start(home, project, **settings, OPENAI_MODEL="smol")
        await client.request("initialize", CODECOMPANION)
        sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))[
            "result"
        ]["sessionId"]
        answer = await client.request("session/prompt", {"sessionId": sid, "prompt": text("hi")})
        assert answer["result"]["usage"] == {
            "inputTokens": 1000,
            "outputTokens": 50,
            "totalTokens": 1050,
            "cachedReadTokens": 800,
        }
        PromptResponse.model_validate(answer["result"])
        (first,) = await client.expect("usage_update")
        one = (200 * 10 + 800 * 1 + 50 * 20) / 1e6
        assert first == {
            "sessionUpdate": "usage_update",
            "used": 1050,
            "size": 4096,
            "cost": {"amount": pytest.approx(one), "currency": "USD"},
        }
        await client.request("session/prompt", {"sessionId": sid, "prompt": text("again")})
        second = (await client.expect("usage_update", 2))[-1]
        assert second["cost"]["amount"] == pytest.approx(2 * one)  # the session's, summed
        UsageUpdate.model_validate(second)
        await client.close()
    finally:
        server.stop()


async def test_no_usage_update_without_a_window(home: Path, project: Path) -> None:
    from providers.replay import ReplayServer, Reply

    stream = Path(__file__).parents[1] / "providers" / "streams" / "openai_text.sse"
    server = ReplayServer()  # /props and /v1/models answer 404; the model is unknown
    try:
        server.queue(Reply([stream.read_bytes()]))
        settings = {"ELELEM_PROVIDER": "openai", "OPENAI_BASE_URL": f"{server.url}/v1"}
        client = await Client.start(home, project, **settings, OPENAI_MODEL="my-model")
        await client.request("initialize", CODECOMPANION)
        sid = (await client.request("session/new", {"cwd": str(project), "mcpServers": []}))[
            "result"
        ]["sessionId"]
        answer = await client.request("session/prompt", {"sessionId": sid, "prompt": text("hi")})
        assert answer["result"]["usage"]["totalTokens"] == 539
        await client.request("session/list", {})  # anything sent after the answer is in
        assert [r.path for r in server.gets] == ["/props", "/v1/models"]
        assert client.of("usage_update") == []
        await client.close()
    finally:
        server.stop()


async def test_session_load_replays_the_tool_calls_between_the_messages(
    home: Path, project: Path
) -> None:
    first = await Client.start(home, project, buffers(project))
    await first.request("initialize", CODECOMPANION)
    sid = (await first.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"][
        "sessionId"
    ]
    for call in ('read {"path":"README.md"}', 'read {"file":"gone.md"}'):
        await first.request("session/prompt", {"sessionId": sid, "prompt": text(f"!tool {call}")})
    live = [u for u in first.updates if u["sessionUpdate"].startswith("tool_call")]
    await first.close()

    again = await Client.start(home, project, buffers(project))
    await again.request("initialize", CODECOMPANION)
    load = {"cwd": str(project), "mcpServers": [], "sessionId": sid}
    assert "result" in await again.request("session/load", load)
    kinds = [
        u["sessionUpdate"]
        for u in again.updates
        if u["sessionUpdate"] != "available_commands_update"
    ]
    assert kinds == [
        "user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk",
        "user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk",
    ]  # fmt: skip
    replayed = [u for u in again.updates if u["sessionUpdate"].startswith("tool_call")]
    for shown, was in zip(replayed, live, strict=True):  # drawn as they were the first time
        assert {k: v for k, v in shown.items() if k != "toolCallId"} == {
            k: v for k, v in was.items() if k != "toolCallId"
        }
    assert replayed[3]["status"] == "failed"
    assert "missing required properties: path" in replayed[3]["rawOutput"]["error"]
    await again.close()
