"""Conformance: the official Python client (`agent-client-protocol`) against the real daemon."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from acp.schema import ClientCapabilities
from acp_editor import TIMEOUT, Editor, acp, alive, daemon, gone

pytestmark = pytest.mark.e2e


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


PNG64 = "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="  # a PNG's first bytes


def text(value: str):
    return acp.text_block(value)


async def prompt(conn, session_id: str, *blocks):
    async with asyncio.timeout(TIMEOUT):
        return await conn.prompt(session_id=session_id, prompt=list(blocks))


async def test_initialize_negotiates_version_1_and_reports_capabilities(tmp_path: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        answer = await conn.initialize(protocol_version=7, client_capabilities=ClientCapabilities())
    assert answer.protocol_version == 1  # not ours: we answer with the latest we speak
    caps = answer.agent_capabilities
    assert caps.prompt_capabilities.embedded_context is True
    assert caps.prompt_capabilities.image is False  # the stub model reads none (test_wire.py)
    assert caps.prompt_capabilities.audio is False
    assert (caps.mcp_capabilities.http, caps.mcp_capabilities.sse) == (True, True)
    assert answer.agent_info.name == "elelem"
    assert answer.auth_methods == []


async def test_session_new_advertises_commands_and_config(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await editor.until(lambda: "available_commands_update" in editor.kinds())
    names = [c.name for c in editor.of("available_commands_update")[0].available_commands]
    assert {"help", "context", "clear", "tools", "provider", "model"} <= set(names)
    assert "exit" not in names  # the editor owns the session's life
    options = {o.id: o for o in session.config_options}
    assert options["provider"].current_value == "stub"
    assert options["model"].current_value == "stub"
    assert session.modes.current_mode_id == "build"  # the agent's modes (test_modes.py)


async def test_streamed_prompt_with_a_tool_call(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    editor.answers = ["allow"]  # execute asks by default
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        streamed = await prompt(conn, sid, text("!stream 5"))
        assert streamed.stop_reason == "end_turn"
        assert editor.said() == "tok0 tok1 tok2 tok3 tok4 "
        editor.updates.clear()
        answer = await prompt(conn, sid, text('!tool execute {"command":"echo hi"}'))
    assert answer.stop_reason == "end_turn"
    kinds = [k for k in editor.kinds() if k != "available_commands_update"]
    assert kinds == [
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_thought_chunk",
        "agent_message_chunk",
    ]
    call, done = editor.of("tool_call")[0], editor.of("tool_call_update")[0]
    assert call.kind == "execute" and call.status == "in_progress"
    assert call.title == "`echo hi`"  # claude-agent-acp's style: the command itself
    assert call.raw_input == {"command": "echo hi"}
    assert done.tool_call_id == call.tool_call_id and done.status == "completed"
    assert done.raw_output == {"exit_status": 0, "content": "hi\n", "ok": True}
    assert editor.said() == "let me check.\n\ndone."  # the text after a call: its own paragraph


async def test_tool_call_ids_are_unique_in_a_session(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        call = {"type": "doing", "id": "call_0", "name": "glob", "arguments": {"pattern": "*"}}
        for _ in range(2):  # a provider may reuse its ids (llama.cpp's call_0): the same twice
            await prompt(conn, sid, text(f"!events {json.dumps([call])}"))
    ids = [u.tool_call_id for u in editor.of("tool_call")]
    assert len(ids) == 2 and len(set(ids)) == 2


async def test_a_failing_tool_is_reported_failed(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(conn, sid, text('!tool read {"path":"missing.txt"}'))
    done = editor.of("tool_call_update")[0]
    assert done.status == "failed"
    assert done.raw_output == {"error": "not found", "path": "missing.txt", "ok": False}
    assert editor.of("tool_call")[0].locations[0].path == str(project / "missing.txt")


async def test_cancel_ends_the_prompt_and_kills_the_tool(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    editor.answers = ["allow"]
    sleeper = ["sleep", "41.5"]  # a command line no other test uses
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        call = json.dumps({"command": "sleep 41.5 && echo never"})
        running = asyncio.create_task(prompt(conn, sid, text(f"!tool execute {call}")))
        await editor.until(lambda: bool(editor.of("tool_call")))  # cancel at once: a race
        await conn.cancel(session_id=sid)
        answer = await running
        assert answer.stop_reason == "cancelled"
        assert await gone(sleeper)
        after = await prompt(conn, sid, text("!echo still here"))  # the session still works
        assert after.stop_reason == "end_turn"
    assert editor.said().endswith("still here")
    failed = editor.of("tool_call_update")[0]
    assert failed.status == "failed" and failed.raw_output == {"error": "cancelled", "ok": False}


async def test_cancel_once_the_tool_runs(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    editor.answers = ["allow"]
    sleeper = ["sleep", "42.5"]
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        call = json.dumps({"command": "sleep 42.5"})
        running = asyncio.create_task(prompt(conn, sid, text(f"!tool execute {call}")))
        async with asyncio.timeout(TIMEOUT):
            while not alive(sleeper):
                await asyncio.sleep(0.05)
        await conn.cancel(session_id=sid)
        assert (await running).stop_reason == "cancelled"
        assert await gone(sleeper)


async def test_cancel_while_streaming(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        running = asyncio.create_task(prompt(conn, sid, text("!stream 100000 5")))
        await editor.until(lambda: len(editor.of("agent_message_chunk")) >= 3)
        await conn.cancel(session_id=sid)
        assert (await running).stop_reason == "cancelled"


async def test_question_with_choices_goes_to_request_permission(
    tmp_path: Path, project: Path
) -> None:
    editor = Editor()
    editor.answers = ["choice-2", None]
    ask = '!tool interview {"question":"Which colour?","options":["red","blue"]}'
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(conn, sid, text(ask))
        await prompt(conn, sid, text(ask))
    first, second = editor.of("tool_call_update")
    assert first.raw_output == {"answer": "blue", "ok": True}
    assert second.raw_output == {"error": "the user gave no answer", "ok": False}
    asked = editor.permissions[0]
    options = [(o.option_id, o.name, o.kind) for o in asked["options"]]
    assert options == [("choice-1", "red", "allow_once"), ("choice-2", "blue", "allow_always")]
    assert asked["toolCall"].tool_call_id == editor.of("tool_call")[0].tool_call_id
    assert asked["toolCall"].title == "Which colour? Accept = red, Always accept = blue"
    assert asked["toolCall"].content[0].content.text == "Which colour?\n\n1. red\n2. blue"


async def test_questions_become_forms_when_the_client_takes_them(
    tmp_path: Path, project: Path
) -> None:
    editor = Editor()
    editor.form_answers = ["in the morning", "red", None]
    free = '!tool interview {"question":"When?"}'
    choose = '!tool interview {"question":"Which colour?","options":["red","blue"]}'
    async with daemon(tmp_path, editor, forms=True) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        for line in (free, choose, free):
            await prompt(conn, sid, text(line))
    answered, chosen, declined = editor.of("tool_call_update")
    assert answered.raw_output == {"answer": "in the morning", "ok": True}
    assert chosen.raw_output == {"answer": "red", "ok": True}
    assert declined.raw_output == {"error": "the user gave no answer", "ok": False}
    assert editor.permissions == []
    first, second = editor.forms[0], editor.forms[1]
    assert first["message"] == "When?"
    assert first["mode"].session_id == sid
    assert first["mode"].tool_call_id == editor.of("tool_call")[0].tool_call_id
    answer = second["mode"].requested_schema.properties["answer"]
    assert answer.enum == ["red", "blue"]


async def test_fs_round_trip_goes_through_the_editor(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    buffer = str(project / "notes.md")
    editor.buffers[buffer] = "unsaved text\n"  # only in the editor, not on disk
    async with daemon(tmp_path, editor, fs=True) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(conn, sid, text('!tool read {"path":"notes.md"}'))
        await prompt(
            conn, sid, text('!tool edit {"path":"notes.md","old":"unsaved","new":"edited"}')
        )
        await prompt(conn, sid, text('!tool write {"path":"new/file.txt","content":"hello"}'))
    read, edited, written = editor.of("tool_call_update")
    assert read.raw_output["content"] == "unsaved text\n"
    assert edited.status == "completed" and written.status == "completed"
    assert editor.writes == [
        (buffer, "edited text\n"),
        (str(project / "new" / "file.txt"), "hello"),
    ]
    assert not (project / "notes.md").exists() and not (project / "new/file.txt").exists()


async def test_without_fs_capability_files_stay_on_disk(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor, fs=False) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(conn, sid, text('!tool write {"path":"disk.txt","content":"on disk"}'))
    assert editor.writes == []
    assert (project / "disk.txt").read_text() == "on disk"


async def test_slash_commands_run_through_prompt(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(conn, sid, text("!echo hello"))
        editor.updates.clear()
        answer = await prompt(conn, sid, text("/context"))
        assert answer.stop_reason == "end_turn"
        assert "user: !echo hello" in editor.said()
        editor.updates.clear()
        await prompt(conn, sid, text("/nope"))
        assert "unknown command: /nope" in editor.said()
        editor.updates.clear()
        await prompt(conn, sid, text("/model other-model"))
        update = editor.of("config_option_update")[0]
        model = {o.id: o for o in update.config_options}["model"]
        assert model.current_value == "other-model"
        editor.updates.clear()
        await prompt(conn, sid, text("/exit"))
        assert "close it in the editor" in editor.said()
        assert (await prompt(conn, sid, text("!echo alive"))).stop_reason == "end_turn"


async def test_undo_and_rewind_are_slash_commands_that_confirm(
    tmp_path: Path, project: Path
) -> None:
    editor = Editor()
    write = '!tool write {"path": "made.txt", "content": "x"}'
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await editor.until(lambda: "available_commands_update" in editor.kinds())
        names = [c.name for c in editor.of("available_commands_update")[0].available_commands]
        assert {"undo", "rewind"} <= set(names)
        await prompt(conn, sid, text(write))
        assert (project / "made.txt").exists()
        editor.updates.clear()
        await prompt(conn, sid, text("/rewind"))
        assert "goes back to before turn N" in editor.said() and write in editor.said()
        editor.answers = ["no", "yes"]
        editor.updates.clear()
        await prompt(conn, sid, text("/undo"))
        assert "not rewound" in editor.said() and (project / "made.txt").exists()
        asked = editor.permissions[0]
        assert [(o.option_id, o.kind) for o in asked["options"]] == [
            ("yes", "allow_once"),
            ("no", "reject_once"),
        ]
        assert "made.txt" in asked["toolCall"].content[0].content.text
        editor.updates.clear()
        answer = await prompt(conn, sid, text("/undo"))
        assert answer.stop_reason == "end_turn" and "rewound to before turn 1" in editor.said()
        assert not (project / "made.txt").exists()
        editor.updates.clear()
        await prompt(conn, sid, text("/rewind 99"))
        assert "no turn 99" in editor.said()


async def test_embedded_resources_become_attachment_blocks(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    uri = (project / "src" / "main.py").as_uri()
    (project / "README.md").write_text("# read me\n")
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        attached = acp.embedded_text_resource(uri, "print('hi')\n", mime_type="text/x-python")
        await prompt(
            conn,
            sid,
            text("!echo look"),
            acp.resource_block(attached),
            acp.resource_link_block("README.md", (project / "README.md").as_uri()),
            acp.resource_link_block("docs", "https://example.com/docs"),
        )
        editor.updates.clear()
        await prompt(conn, sid, text("/context json"))
    messages = json.loads(editor.said().strip().strip("`"))
    user = [m for m in messages if m["role"] == "user"][0]["content"]
    assert user == (
        "!echo look\n\n[@docs](https://example.com/docs)\n\n"
        '<attachment type="file" path="src/main.py">\nprint(\'hi\')\n</attachment>\n\n'
        '<attachment type="file" path="README.md">\n# read me\n</attachment>'
    )


async def test_set_config_option_and_mode(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        answer = await conn.set_config_option(config_id="model", session_id=sid, value="big")
        model = {o.id: o for o in answer.config_options}["model"]
        assert model.current_value == "big"
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        with pytest.raises(acp.RequestError) as bad_provider:
            await conn.set_config_option(config_id="provider", session_id=sid, value="nope")
        assert "unknown provider" in str(bad_provider.value)
        with pytest.raises(acp.RequestError) as bad_option:
            await conn.set_config_option(config_id="colour", session_id=sid, value="red")
        assert bad_option.value.code == -32602


async def test_bad_requests_get_clear_errors(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        with pytest.raises(acp.RequestError) as unknown:
            await conn.prompt(session_id="nope", prompt=[text("hi")])
        assert unknown.value.code == -32002 and "unknown session" in str(unknown.value)
        with pytest.raises(acp.RequestError) as relative:
            await conn.new_session(cwd="relative/path", mcp_servers=[])
        assert "absolute" in str(relative.value)
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        with pytest.raises(acp.RequestError) as image:  # the stub model has no vision
            await conn.prompt(session_id=sid, prompt=[acp.image_block(PNG64, "image/png")])
        assert image.value.code == -32602 and image.value.data["kind"] == "invalid_attachment"
        assert "does not accept images" in str(image.value)
        with pytest.raises(acp.RequestError) as audio:
            await conn.prompt(session_id=sid, prompt=[acp.audio_block("AAAA", "audio/wav")])
        assert "audio content is not supported" in str(audio.value)


async def test_session_new_reports_plugins_and_mcp_servers(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        assert session.field_meta["elelem"]["mcp"] == {"servers": [], "problems": []}
        plugins = {p["name"]: p for p in session.field_meta["elelem"]["plugins"]}
        assert plugins["files"] == {
            "name": "files",
            "source": "builtin",
            "path": "elelem_daemon.builtins.files",
            "error": None,
        }
        answer = await prompt(conn, session.session_id, text("!echo fine"))
        assert answer.stop_reason == "end_turn"


async def test_list_sessions(tmp_path: Path, project: Path) -> None:
    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        listed = await conn.list_sessions(cwd=str(project))
        other = await conn.list_sessions(cwd=str(tmp_path))
    assert [s.session_id for s in listed.sessions] == [sid]
    assert other.sessions == []


async def test_the_zed_settings_in_the_docs_start_a_working_agent(
    tmp_path: Path, project: Path
) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "editors.md").read_text()
    block = re.search(r"## Zed\n.*?```json\n(.*?)```", doc, re.S)
    assert block is not None
    server = json.loads(block.group(1))["agent_servers"]["elelem"]
    assert server["type"] == "custom" and server["command"] == "elelem"
    editor = Editor()
    elelem = str(Path(sys.executable).with_name(server["command"]))  # the installed script
    env = {**server["env"], "ELELEM_PROVIDER": "stub"}  # as written, but offline
    options = {"args": server["args"], "env": env, "command": elelem}
    async with daemon(tmp_path, editor, **options) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        assert (await prompt(conn, sid, text("!echo from zed"))).stop_reason == "end_turn"
    assert editor.said() == "from zed"


async def test_a_reply_cut_off_by_the_token_limit_stops_with_max_tokens(
    tmp_path: Path, project: Path
) -> None:
    from providers.replay import ReplayServer, Reply

    server = ReplayServer()
    recorded = Path(__file__).parent.parent / "providers" / "streams" / "openai_length.sse"
    server.queue(Reply([recorded.read_bytes()], content_type="text/event-stream"))
    env = {"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "none", "ELELEM_PROVIDER": ""}
    editor = Editor()
    try:
        async with daemon(tmp_path, editor, args=["daemon", "--acp", "-p", "openai"], env=env) as (
            conn,
            _,
        ):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            answer = await prompt(conn, sid, text("hi"))
    finally:
        server.stop()
    assert answer.stop_reason == "max_tokens"
    assert editor.said() == "The README says: # Demo, a sm"
