"""The ACP face's wire, byte by byte: bad input gets clear JSON-RPC errors, lines of any
length pass, `$/cancel_request` works, stdout carries only protocol, end of input ends it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from support.ndjson import TIMEOUT, Wire
from support.real_folders import own

pytestmark = pytest.mark.e2e


@pytest.fixture
async def wire(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env = own(tmp_path, env)
    env.update(ELELEM_PROVIDER="stub")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=tmp_path,
        limit=16 * 1024 * 1024,
    )  # fmt: skip
    yield Wire(process)
    if process.returncode is None:
        process.kill()
        await process.wait()


def kind(message: dict[str, Any]) -> str | None:
    return message.get("params", {}).get("update", {}).get("sessionUpdate")


async def session(wire: Wire, cwd: Path) -> str:
    answer = await wire.call(1, "session/new", {"cwd": str(cwd), "mcpServers": []})
    return answer["result"]["sessionId"]


async def test_bad_lines_get_parse_and_request_errors(wire: Wire) -> None:
    await wire.line("this is not json\n")
    parse = await wire.read()
    assert parse["id"] is None and parse["error"]["code"] == -32700
    await wire.line("[1, 2]\n")
    assert (await wire.read())["error"]["code"] == -32600
    await wire.line('{"id": 3, "method": "initialize"}\n')  # no "jsonrpc": "2.0"
    missing = await wire.read()
    assert missing["id"] == 3 and missing["error"]["message"] == 'jsonrpc must be "2.0"'
    await wire.line('{"jsonrpc": "2.0", "id": 4}\n')
    assert (await wire.read())["error"]["code"] == -32600
    await wire.line("\n   \n")  # blank lines are nothing
    answer = await wire.call(5, "initialize", {"protocolVersion": 1})
    assert answer["result"]["protocolVersion"] == 1  # still serving


async def test_unknown_methods_and_bad_params(wire: Wire, tmp_path: Path) -> None:
    unknown = await wire.call(1, "session/dance")
    assert unknown["error"]["code"] == -32601 and "session/dance" in unknown["error"]["message"]
    await wire.send(id=2, method="initialize", params=[1])
    assert (await wire.answer(2))["error"]["message"] == "params must be an object"
    version = await wire.call(3, "initialize", {"protocolVersion": "1"})
    assert version["error"] == {
        "code": -32602,
        "message": "protocolVersion: not an integer",
        "data": {
            "kind": "invalid_params",
            "errors": [{"field": "protocolVersion", "expected": "int"}],
        },
    }
    no_cwd = await wire.call(4, "session/new", {"mcpServers": []})
    assert no_cwd["error"]["message"] == "cwd: missing"
    missing_dir = await wire.call(5, "session/new", {"cwd": str(tmp_path / "nope")})
    assert missing_dir["error"]["message"].startswith("cwd: not a directory")
    bad_server = await wire.call(6, "session/new", {"cwd": str(tmp_path), "mcpServers": [{}]})
    assert bad_server["error"]["message"] == "mcpServers[0]: an MCP server needs a name"
    sid = await session(wire, tmp_path)
    empty = await wire.call(7, "session/prompt", {"sessionId": sid, "prompt": "text"})
    assert empty["error"]["message"] == "prompt: expected an array of content blocks"
    odd = await wire.call(8, "session/prompt", {"sessionId": sid, "prompt": [{"type": "video"}]})
    assert odd["error"]["message"] == "prompt[0]: unknown content block type: video"
    auth = await wire.call(9, "authenticate", {"methodId": "x"})
    assert auth["error"]["message"] == "methodId: unknown method 'x'"  # none offered here


async def test_a_second_prompt_while_one_runs_is_a_steer(wire: Wire, tmp_path: Path) -> None:
    """Issue 20: a text prompt during a turn is queued for it (docs/acp.md, Steering) and
    answered with that turn; a slash command then is refused busy, as before."""
    sid = await session(wire, tmp_path)
    slow = {"type": "text", "text": "!stream 100000 5"}
    await wire.send(id=2, method="session/prompt", params={"sessionId": sid, "prompt": [slow]})
    while kind(await wire.read()) != "agent_message_chunk":
        pass  # the turn runs
    command = {"type": "text", "text": "/clear"}
    busy = await wire.call(3, "session/prompt", {"sessionId": sid, "prompt": [command]})
    assert busy["error"]["code"] == -32001 and busy["error"]["data"]["kind"] == "session_busy"
    await wire.send(id=4, method="session/prompt", params={"sessionId": sid, "prompt": [slow]})
    await wire.call(5, "session/list", {})  # requests start in order: the steer is queued
    await wire.send(method="session/cancel", params={"sessionId": sid})
    assert (await wire.answer(2))["result"]["stopReason"] == "cancelled"
    steered = (await wire.answer(4))["result"]
    assert steered == {"stopReason": "cancelled", "_meta": {"elelem": {"steer": "dropped"}}}


def gated(gate: Path) -> dict[str, Any]:
    """A text block whose turn runs `execute` until `gate` exists."""
    command = f"while [ ! -e {gate} ]; do sleep 0.05; done"
    return {"type": "text", "text": f"!tool execute {json.dumps({'command': command})}"}


async def allow(wire: Wire) -> None:
    """Answer the next permission question `allow`."""
    while True:
        message = await wire.read()
        if message.get("method") == "session/request_permission":
            outcome = {"outcome": "selected", "optionId": "allow"}
            await wire.send(id=message["id"], result={"outcome": outcome})
            return


def said(wire: Wire) -> str:
    return "".join(
        m["params"]["update"]["content"].get("text", "")
        for m in wire.seen
        if kind(m) == "agent_message_chunk"
    )


async def test_a_cancelled_steer_the_turn_has_not_taken_is_withdrawn(
    wire: Wire, tmp_path: Path
) -> None:
    """A steer is a prompt sent during a turn; `$/cancel_request` for it before the turn
    took it takes it back: answered cancelled (`withdrawn`), never sent, not said."""
    sid = await session(wire, tmp_path)
    gate = tmp_path / "gate"
    await wire.send(
        id=2, method="session/prompt", params={"sessionId": sid, "prompt": [gated(gate)]}
    )
    await allow(wire)  # the tool runs now, until the gate
    steer = {"type": "text", "text": "forget it"}
    await wire.send(id=3, method="session/prompt", params={"sessionId": sid, "prompt": [steer]})
    await wire.call(4, "session/list", {})  # requests start in order: the steer is queued
    await wire.send(method="$/cancel_request", params={"requestId": 3})
    withdrawn = (await wire.answer(3))["result"]
    assert withdrawn == {"stopReason": "cancelled", "_meta": {"elelem": {"steer": "withdrawn"}}}
    gate.touch()
    assert (await wire.answer(2))["result"]["stopReason"] == "end_turn"
    assert "forget it" not in said(wire) and said(wire).endswith("done.")
    context = await wire.call(5, "session/prompt", {"sessionId": sid, "prompt": [
        {"type": "text", "text": "/context"}]})  # fmt: skip
    assert context["result"]["stopReason"] == "end_turn"
    assert "forget it" not in said(wire)  # not kept in the conversation either


async def test_a_cancelled_steer_the_turn_took_says_it_was_sent(wire: Wire, tmp_path: Path) -> None:
    """Once the turn took a steer its cancel cannot take it back: the answer says `sent`
    (the model read it, the conversation keeps it) at once, and the turn goes on."""
    sid = await session(wire, tmp_path)
    first, second = tmp_path / "first", tmp_path / "second"
    await wire.send(
        id=2, method="session/prompt", params={"sessionId": sid, "prompt": [gated(first)]}
    )
    await allow(wire)
    again = gated(second)["text"].replace("!tool execute ", '!tools [["execute", ') + "]]"
    steer = {"type": "text", "text": again}  # the steered round runs one more tool
    await wire.send(id=3, method="session/prompt", params={"sessionId": sid, "prompt": [steer]})
    await wire.call(4, "session/list", {})
    first.touch()
    await allow(wire)  # the next request took the steer: its tool asks
    await wire.send(method="$/cancel_request", params={"requestId": 3})
    sent = (await wire.answer(3))["result"]
    assert sent == {"stopReason": "cancelled", "_meta": {"elelem": {"steer": "sent"}}}
    second.touch()
    assert (await wire.answer(2))["result"]["stopReason"] == "end_turn"


async def test_cancel_request_cancels_a_prompt(wire: Wire, tmp_path: Path) -> None:
    sid = await session(wire, tmp_path)
    slow = {"type": "text", "text": "!stream 100000 5"}
    await wire.send(id="p", method="session/prompt", params={"sessionId": sid, "prompt": [slow]})
    while kind(await wire.read()) != "agent_message_chunk":
        pass  # the turn runs
    await wire.send(method="$/cancel_request", params={"requestId": "p"})
    assert (await wire.answer("p"))["result"] == {"stopReason": "cancelled"}


async def test_lines_have_no_length_limit(wire: Wire, tmp_path: Path) -> None:
    sid = await session(wire, tmp_path)
    big = "x" * 300_000  # asyncio's default line limit is 64 KiB
    block = {"type": "text", "text": f"!echo {big}"}
    answer = await wire.call(2, "session/prompt", {"sessionId": sid, "prompt": [block]})
    assert answer["result"]["stopReason"] == "end_turn"
    said = [
        m["params"]["update"]["content"]["text"]
        for m in wire.seen
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert said == [big]


async def test_a_plugin_printing_to_stdout_cannot_break_the_protocol(tmp_path: Path) -> None:
    plugins = tmp_path / "project" / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "noisy.py").write_text(
        "def register(plugin):\n"
        "    print('hello from a plugin')\n"
        "    @plugin.tool('shout', 'Print to stdout')\n"
        "    def shout(session, args):\n"
        "        print('shouting')\n"
        "        return {'content': 'shouted'}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env = own(tmp_path, env)
    env.update(ELELEM_PROVIDER="stub")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    wire = Wire(process)
    new = await wire.call(
        1,
        "session/new",
        {"cwd": str(tmp_path / "project"), "mcpServers": [], "_meta": {"trusted": True}},
    )
    sid = new["result"]["sessionId"]
    block = {"type": "text", "text": "!tool shout {}"}
    answer = await wire.call(2, "session/prompt", {"sessionId": sid, "prompt": [block]})
    assert answer["result"]["stopReason"] == "end_turn"
    assert process.stdin is not None
    process.stdin.close()
    out, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
    assert out == b""  # every line before was JSON (read() parsed them), nothing after
    assert b"hello from a plugin" in err and b"shouting" in err


async def test_end_of_input_ends_the_process(wire: Wire, tmp_path: Path) -> None:
    sid = await session(wire, tmp_path)
    block = {"type": "text", "text": '!tool execute {"command":"sleep 44.5"}'}
    await wire.send(id=2, method="session/prompt", params={"sessionId": sid, "prompt": [block]})
    while kind(await wire.read()) != "tool_call":
        pass
    assert wire.process.stdin is not None
    wire.process.stdin.close()
    assert await asyncio.wait_for(wire.process.wait(), TIMEOUT) == 0


async def test_cancel_request_before_the_request_runs_still_answers(wire: Wire) -> None:
    request = {"jsonrpc": "2.0", "id": 7, "method": "session/list", "params": {}}
    cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}}
    await wire.line(f"{json.dumps(request)}\n{json.dumps(cancel)}\n")  # one read, both lines
    answer = await wire.answer(7)
    assert answer.get("error", {}).get("code") == -32800 or answer["result"] == {"sessions": []}
    later = await wire.call(8, "session/list")
    assert later["result"] == {"sessions": []}


async def test_an_unknown_default_provider_is_a_clear_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env = own(tmp_path, env)
    env.update(ELELEM_PROVIDER="nope")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    wire = Wire(process)
    answer = await wire.call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    assert answer["error"]["code"] == -32602
    assert answer["error"]["data"] == {"kind": "unknown_provider"}
    assert answer["error"]["message"].startswith('unknown provider: "nope"')
    assert process.stdin is not None
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0


async def test_every_error_names_its_kind_and_an_empty_prompt_is_answered(
    wire: Wire, tmp_path: Path
) -> None:
    """Issue 33: `data.kind` on every error (audio included), one chunk for an empty
    prompt (codecompanion waits for a reply before its next message), and no `/shell`
    offered where there is no terminal to lend."""
    await wire.line("not json\n")
    assert (await wire.read())["error"]["data"]["kind"] == "parse_error"
    assert (await wire.call(1, "session/dance"))["error"]["data"]["kind"] == "method_not_found"
    sid = await session(wire, tmp_path)
    while not (commands := [m for m in wire.seen if kind(m) == "available_commands_update"]):
        await wire.read()  # sent just after session/new's answer
    names = {c["name"] for c in commands[-1]["params"]["update"]["availableCommands"]}
    assert "shell" not in names and "help" in names
    audio = {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"}
    refused = await wire.call(2, "session/prompt", {"sessionId": sid, "prompt": [audio]})
    assert refused["error"]["data"] == {"kind": "invalid_params", "index": 0}
    mark = len(wire.seen)
    empty = await wire.call(3, "session/prompt", {"sessionId": sid, "prompt": []})
    assert empty["result"] == {"stopReason": "end_turn"}
    said = [m for m in wire.seen[mark:] if kind(m) == "agent_message_chunk"]
    assert [m["params"]["update"]["content"]["text"] for m in said] == [
        "(an empty message: nothing to do)"
    ]


async def test_images_are_advertised_only_when_the_model_takes_them(tmp_path: Path) -> None:
    async def advertised(*args: str) -> bool:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
        env = own(tmp_path, env)
        env.update(ELELEM_PROVIDER="stub")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "elelem_daemon", "daemon", "--acp", *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=tmp_path,
        )  # fmt: skip
        try:
            answer = await Wire(process).call(1, "initialize", {"protocolVersion": 1})
        finally:
            process.kill()
            await process.wait()
        return answer["result"]["agentCapabilities"]["promptCapabilities"]["image"]

    assert await advertised() is False  # the stub's default model reads no image
    assert await advertised("-m", "vision") is True


async def test_a_replayed_session_keeps_its_messages_apart(tmp_path: Path) -> None:
    """Issue 33: replayed, `Context: done.` and the next prompt read as one line
    (`Context: done.hello after compact 2`), and `let me check.[cancelled]`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env = own(tmp_path, env)
    env.update(ELELEM_PROVIDER="stub")

    async def daemon() -> Wire:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "elelem_daemon", "daemon", "--acp",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=tmp_path,
        )  # fmt: skip
        return Wire(process)

    first = await daemon()
    sid = await session(first, tmp_path)
    for ident, words in enumerate(["!echo one", "/compact", "!echo two"], 2):
        prompt = [{"type": "text", "text": words}]
        assert "result" in await first.call(
            ident, "session/prompt", {"sessionId": sid, "prompt": prompt}
        )
    first.process.kill()
    await first.process.wait()
    again = await daemon()
    try:
        load = {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}
        assert "result" in await again.call(1, "session/load", load)
        users = [
            m["params"]["update"]["content"]["text"]
            for m in again.seen
            if kind(m) == "user_message_chunk"
        ]
        # the whole transcript: the turn before /compact, then (after the compaction's
        # agent chunk) the next prompt, apart; the summary is the model's, not replayed
        assert users == ["!echo one", "!echo two"]
    finally:
        again.process.kill()
        await again.process.wait()


def test_a_cancelled_reply_shows_its_mark_apart() -> None:
    from elelem_daemon.faces.acp.live import apart

    assert apart("let me check.[cancelled]") == "let me check.\n\n[cancelled]"
    assert apart("[cancelled]") == "[cancelled]"
    assert apart("done.\n[cancelled]") == "done.\n[cancelled]"
