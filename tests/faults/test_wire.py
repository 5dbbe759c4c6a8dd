"""The wire stays JSON (issue 13, item 7), in the daemon over stdio and the ACP face over
NDJSON: a hostile model's `1e999`, `NaN` or arguments nested 980 deep are a failed tool
call the model reads, never `Infinity` on the wire, in the stored session or in the
next request; a frame or line of 100,000 `[` is a parse error and the face goes on; a
bug inside a turn ends it as an error; the kept history always alternates."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.ndjson import Wire

from .conftest import Tap, stored, within

pytestmark = pytest.mark.e2e

DEEP = "[" * 980 + "]" * 980
HOSTILE = {
    "a number past a float": '{"path": "README.md", "limit": 1e999}',
    "NaN": '{"path": "README.md", "limit": NaN}',
    "-Infinity": '{"path": "README.md", "offset": -Infinity}',
    "nested 980 deep": '{"path": "README.md", "x": ' + DEEP + "}",
}
WHY = {
    "a number past a float": "1e999 is not a finite number",
    "NaN": "NaN is not JSON",
    "-Infinity": "-Infinity is not JSON",
    "nested 980 deep": "nested deeper than 100 levels",
}
# A user plugin whose tool returns what JSON cannot say, and a provider that breaks
# the agent's loop with a call that has no id.
ODD = """
import math

def register(plugin):
    @plugin.tool("odd", "returns non-finite numbers")
    def odd(session, args):
        return {"content": "odd", "values": [math.inf, -math.inf, math.nan, 1.5]}

    class Broken:
        name, model = "broken", "broken"

        async def fetch(self, messages, tools):
            yield {"type": "saying", "text": "about to break"}
            yield {"type": "doing", "name": "read"}  # no id: a KeyError in the loop

    plugin.provider("broken", lambda model=None, **_: Broken())
"""


def strict(text: str | bytes) -> Any:
    """JSON as JSON.parse reads it: NaN and Infinity are errors."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} on the wire: {str(text)[:200]}")

    return json.loads(text, parse_constant=refuse)


def frames(data: bytes) -> list[Any]:
    """Every Content-Length frame in data, strictly parsed."""
    out, at = [], 0
    while (start := data.find(b"Content-Length: ", at)) >= 0:
        end = data.index(b"\r\n\r\n", start)
        length = int(data[start + 16 : end])
        out.append(strict(data[end + 4 : end + 4 + length]))
        at = end + 4 + length
    return out


def odd_plugin(env: dict[str, str]) -> None:
    folder = Path(env["HOME"]) / ".agents" / "plugins"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "odd.py").write_text(textwrap.dedent(ODD))


def alternates(messages: list[dict[str, Any]]) -> bool:
    """The kept conversation (after the system prompt): user, assistant, user, ..."""
    roles = [m["role"] for m in messages if m["role"] != "system"]
    return roles == ["user", "assistant"] * (len(roles) // 2) and len(roles) % 2 == 0


# -- the daemon ----------------------------------------------------------------------
@pytest.mark.parametrize("how", list(HOSTILE))
async def test_the_daemon_answers_hostile_arguments_as_a_failed_call(
    spawn: Any, env: dict[str, str], workdir: Path, how: str
) -> None:
    (workdir / "README.md").write_text("# Demo\n")
    client = await spawn()
    tap = Tap()
    tap.attach(client)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    events: list[Any] = []
    answer = await within(
        client.turn(session, f"!tool read {HOSTILE[how]}", on_event=events.append), 30
    )
    assert answer["stopReason"] == "end_turn" and answer["reply"] == "done."
    results = [e["params"] for e in events if e["method"] == "event/result"]
    assert len(results) == 1 and results[0]["ok"] is False
    assert results[0]["result"]["error"].startswith(f"unusable tool arguments: {WHY[how]}")
    doing = [e["params"] for e in events if e["method"] == "event/doing"]
    assert doing[0]["arguments"] == {}  # the hostile arguments go nowhere
    again = await within(client.turn(session, "!echo still here"))
    assert again["reply"] == "still here"
    assert alternates(await within(client.context(session)))
    await client.close()
    assert frames(bytes(tap.stdout))  # every byte it wrote is strict JSON
    for line in stored(env).splitlines():
        strict(line)


async def test_a_tool_result_with_non_finite_numbers_is_written_as_null(
    spawn: Any, env: dict[str, str]
) -> None:
    odd_plugin(env)
    client = await spawn()
    tap = Tap()
    tap.attach(client)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    events: list[Any] = []
    answer = await within(client.turn(session, "!tool odd {}", on_event=events.append))
    assert answer["stopReason"] == "end_turn"
    await client.close()
    results = [m for m in frames(bytes(tap.stdout)) if m.get("method") == "event/result"]
    assert results[0]["params"]["result"]["values"] == [None, None, None, 1.5]


async def test_a_bug_inside_a_turn_ends_it_as_an_error_and_the_history_alternates(
    spawn: Any, env: dict[str, str]
) -> None:
    odd_plugin(env)
    client = await spawn()
    await within(client.initialize())
    session = (await within(client.new_session(provider="broken")))["sessionId"]
    for _ in range(2):
        answer = await within(client.turn(session, "hello"))
        assert answer["stopReason"] == "error"
        assert answer["reply"].startswith("Error: KeyError")
    messages = await within(client.context(session))
    assert [m["role"] for m in messages] == ["system", *["user", "assistant"] * 2]
    await within(client.command(session, "/provider stub"))
    assert (await within(client.turn(session, "!echo fine")))["reply"] == "fine"
    assert alternates(await within(client.context(session)))


async def test_a_frame_nested_100000_deep_is_a_parse_error(raw: Any) -> None:
    daemon = await raw()
    body = b"[" * 100_000
    await daemon.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    error = await within(daemon.message())
    assert error["error"]["code"] == -32700
    assert "nested deeper than 100 levels" in error["error"]["message"]
    nan = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": NaN}}'
    await daemon.write(b"Content-Length: %d\r\n\r\n%s" % (len(nan), nan))
    assert "NaN is not JSON" in (await within(daemon.message()))["error"]["message"]
    good = b'{"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}}'
    await daemon.write(b"Content-Length: %d\r\n\r\n%s" % (len(good), good))
    assert (await within(daemon.message()))["result"]["serverInfo"]["name"] == "elelem"


# -- the ACP face --------------------------------------------------------------------
async def acp(env: dict[str, str], cwd: Path, *args: str) -> Wire:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp", "--provider", "stub", *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=cwd,
        limit=64 * 1024 * 1024,
    )  # fmt: skip
    wire = Wire(process)
    await wire.call(0, "initialize", {"protocolVersion": 1})
    return wire


async def stop(wire: Wire) -> None:
    if wire.process.returncode is None:
        wire.process.kill()
        await wire.process.wait()


async def refusal(wire: Wire) -> dict[str, Any]:
    """The next error answered to no request (id null), past the notifications."""
    while "error" not in (message := await wire.read()):
        pass
    return message


async def prompt(wire: Wire, ident: int, session: str, text: str) -> dict[str, Any]:
    block = {"type": "text", "text": text}
    return await wire.call(ident, "session/prompt", {"sessionId": session, "prompt": [block]})


@pytest.mark.parametrize("how", list(HOSTILE))
async def test_the_acp_face_answers_hostile_arguments_as_a_failed_call(
    env: dict[str, str], workdir: Path, how: str
) -> None:
    (workdir / "README.md").write_text("# Demo\n")
    wire = await acp(env, workdir)
    try:
        new = await wire.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []})
        session = new["result"]["sessionId"]
        answer = await prompt(wire, 2, session, f"!tool read {HOSTILE[how]}")
        assert answer["result"]["stopReason"] == "end_turn"
        updates = [m["params"]["update"] for m in wire.seen if m.get("method") == "session/update"]
        failed = [u for u in updates if u.get("status") == "failed"]
        assert failed and WHY[how] in json.dumps(failed[0])
        assert (await prompt(wire, 3, session, "!echo on"))["result"]["stopReason"] == "end_turn"
    finally:
        await stop(wire)
    for message in wire.seen:
        strict(json.dumps(message, allow_nan=True))  # what it read held no NaN or Infinity


async def test_an_acp_line_of_100000_brackets_is_a_parse_error(
    env: dict[str, str], workdir: Path
) -> None:
    wire = await acp(env, workdir)
    try:
        await wire.line(b"[" * 100_000 + b"\n")
        error = await refusal(wire)
        assert error["id"] is None and error["error"]["code"] == -32700
        assert "nested deeper than 100 levels" in error["error"]["message"]
        await wire.line(b'{"jsonrpc": "2.0", "id": 5, "method": "x", "params": {"a": Infinity}}\n')
        assert "Infinity is not JSON" in (await refusal(wire))["error"]["message"]
        answer = await wire.call(6, "session/new", {"cwd": str(workdir), "mcpServers": []})
        assert answer["result"]["sessionId"]
    finally:
        await stop(wire)
    assert wire.process.returncode is not None


# -- the ACP face: long lines (item 6) -----------------------------------------------
MIB = 1024 * 1024


async def test_an_acp_line_past_the_frame_limit_is_refused_and_the_next_is_served(
    env: dict[str, str], workdir: Path
) -> None:
    wire = await acp(env, workdir, "--max-frame", "300")
    try:
        new = await wire.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []})
        session = new["result"]["sessionId"]
        line = json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"x": "y" * 400}}
        )
        await wire.line(line + "\n")
        error = await refusal(wire)
        assert error == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": f"message too large: {len(line)} bytes (limit 300)",
                "data": {"kind": "parse_error"},
            },
        }
        exact = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt"}
        params = {"sessionId": session, "prompt": [{"type": "text", "text": "!echo ok"}]}
        text = json.dumps({**exact, "params": params})
        pad = 300 - len(text) - len(', "pad": ""')
        text = json.dumps({**exact, "params": params, "pad": "p" * pad})
        assert len(text) == 300  # exactly the limit is fine
        await wire.line(text + "\n")
        assert (await wire.answer(3))["result"]["stopReason"] == "end_turn"
    finally:
        await stop(wire)


async def test_a_48_mib_acp_line_is_refused_and_a_30_mib_one_is_served(
    env: dict[str, str], workdir: Path
) -> None:
    wire = await acp(env, workdir, "--max-frame", str(40 * MIB))
    try:
        new = await wire.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []})
        session = new["result"]["sessionId"]
        big = b'{"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"x": "' + b"y" * (48 * MIB)
        await wire.line(big + b'"}}\n')
        error = await within(refusal(wire), 120)
        assert error["error"]["message"].startswith("message too large: ")
        text = "!echo " + "z" * (30 * MIB)
        answer = await within(prompt(wire, 3, session, text), 120)
        assert answer["result"]["stopReason"] == "end_turn"
        said = "".join(
            m["params"]["update"]["content"]["text"]
            for m in wire.seen
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        )
        assert len(said) == 30 * MIB  # the echo's text, whole
    finally:
        await stop(wire)
