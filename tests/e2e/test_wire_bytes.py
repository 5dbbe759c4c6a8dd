"""protocol.md against the wire: each claim checked on the raw bytes the daemon writes.

The headers it sends, the default provider, the errors `session/new` can answer,
which malformed messages get no answer, resynchronising after a bad body, how long a
quoted session id may be, and the exit code of a signal that comes before any session.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest
from support.raw import RawDaemon, clean_env, frame

pytestmark = pytest.mark.e2e
LIST = b'{"jsonrpc":"2.0","id":"next","method":"session/list"}'


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


async def spawn(tmp_path: Path, home: Path, *args: str, **env: str) -> RawDaemon:
    return await RawDaemon.spawn(*args, env=clean_env(home, **env), cwd=tmp_path)


async def test_the_only_header_sent_is_content_length(tmp_path: Path, home: Path) -> None:
    daemon = await spawn(tmp_path, home, "-p", "stub")
    await daemon.write(frame(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'))
    await daemon.write(frame(b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}'))
    assert (await daemon.message())["id"] == 1  # RawDaemon cuts frames strictly
    assert (await daemon.message())["id"] == 2
    await daemon.write(frame(b'{"jsonrpc":"2.0","id":3,"method":"shutdown"}'))
    while b"\r\n\r\n" not in daemon.buffer:
        await daemon._more()
    assert daemon.buffer.startswith(b"Content-Length: ")
    assert b"Content-Type" not in daemon.buffer
    await daemon.close()


@pytest.mark.parametrize(
    ("env", "provider"),
    [
        ({"ANTHROPIC_API_KEY": "sk-ant-not-a-key"}, "anthropic"),  # the README's order
        ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "openai"),
        ({"OLLAMA_HOST": "127.0.0.1:9"}, "stub"),  # nothing answers there: the stub
        ({"ELELEM_PROVIDER": "stub", "ANTHROPIC_API_KEY": "sk-ant-not-a-key"}, "stub"),
    ],
)
async def test_the_default_provider_is_chosen_as_the_readme_says(
    tmp_path: Path, home: Path, env: dict[str, str], provider: str
) -> None:
    daemon = await spawn(tmp_path, home, **env)
    answer = await daemon.call(1, "session/new", {"cwd": str(tmp_path)})
    assert answer["result"]["provider"] == provider
    await daemon.close()


async def test_session_new_can_answer_provider_error(tmp_path: Path, home: Path) -> None:
    daemon = await spawn(tmp_path, home, "-p", "openai")  # no key, no local server
    answer = await daemon.call(1, "session/new", {"cwd": str(tmp_path)})
    assert answer["error"]["code"] == -32000
    assert answer["error"]["data"] == {"kind": "provider_error"}
    assert "OPENAI_API_KEY" in answer["error"]["message"]
    await daemon.close()


async def test_a_malformed_notification_is_never_answered(tmp_path: Path, home: Path) -> None:
    daemon = await spawn(tmp_path, home, "-p", "stub")
    for body in (
        b'{"jsonrpc":"1.0","method":"session/cancel","params":{}}',
        b'{"method":"session/cancel"}',
        b'{"jsonrpc":"2.0","method":5}',
        b'{"jsonrpc":"2.0","method":"session/cancel","params":"x"}',
        b'{"jsonrpc":"2.0","method":"initialized","params":7}',
    ):
        await daemon.write(frame(body))
    await daemon.write(frame(LIST))
    first = await daemon.message()  # nothing came before the answer to the request
    assert first == {"jsonrpc": "2.0", "id": "next", "result": {"sessions": []}}
    await daemon.close()


async def test_newline_delimited_json_after_a_bad_body_gets_its_parse_error(
    tmp_path: Path, home: Path
) -> None:
    daemon = await spawn(tmp_path, home, "-p", "stub")
    await daemon.write(frame(b"{bad}") + LIST + b"\n")
    bad = await daemon.message()
    ndjson = await daemon.message()
    assert (bad["id"], bad["error"]["code"]) == (None, -32700)
    assert (ndjson["id"], ndjson["error"]["code"]) == (None, -32700)
    assert ndjson["error"]["message"].startswith("data outside a frame")
    await daemon.write(frame(LIST))
    assert (await daemon.message())["id"] == "next"
    await daemon.close()


async def test_the_rest_of_a_body_cut_short_is_skipped_quietly(tmp_path: Path, home: Path) -> None:
    """A Content-Length too small: the body is the start of a JSON text, the rest of it
    follows outside the frame and gets no second error."""
    daemon = await spawn(tmp_path, home, "-p", "stub")
    whole = b'{"jsonrpc":"2.0","id":1,"method":"session/list"}'
    await daemon.write(b"Content-Length: 20\r\n\r\n" + whole + b"\r\n" + frame(LIST))
    cut = await daemon.message()
    assert (cut["id"], cut["error"]["code"]) == (None, -32700)
    assert (await daemon.message())["id"] == "next"
    await daemon.close()


async def test_a_quoted_session_id_is_at_most_200_characters(tmp_path: Path, home: Path) -> None:
    daemon = await spawn(tmp_path, home, "-p", "stub")
    long = "s" * 1000
    answer = await daemon.call(1, "session/turn", {"sessionId": long, "text": "hi"})
    error = answer["error"]
    assert error["data"] == {"kind": "unknown_session", "sessionId": "s" * 200}
    assert error["message"] == f"unknown session: {'s' * 200}..."
    short = await daemon.call(2, "session/turn", {"sessionId": "abc", "text": "hi"})
    assert short["error"]["data"]["sessionId"] == "abc"
    assert short["error"]["message"] == "unknown session: abc"
    await daemon.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
async def test_a_signal_before_any_message_exits_128_plus_n(
    tmp_path: Path, home: Path, sig: int
) -> None:
    daemon = await spawn(tmp_path, home, "-p", "stub")
    await daemon.catches(signal.SIGTERM)  # it has started: its handlers are there
    daemon.process.send_signal(sig)
    assert await asyncio.wait_for(daemon.process.wait(), 10) == 128 + sig


async def test_a_signal_after_initialize_before_any_session(tmp_path: Path, home: Path) -> None:
    daemon = await spawn(tmp_path, home, "-p", "stub")
    assert "result" in await daemon.call(1, "initialize", {})
    await daemon.catches(signal.SIGTERM)
    daemon.process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(daemon.process.wait(), 10) == 128 + signal.SIGTERM
    assert daemon.process.stdout is not None
    assert await daemon.process.stdout.read() == b""  # nothing half-written after it


async def test_session_command_says_whether_its_output_is_markdown(
    tmp_path: Path, home: Path
) -> None:
    daemon = await spawn(tmp_path, home, "-p", "stub")
    session = (await daemon.call(1, "session/new", {"cwd": str(tmp_path)}))["result"]
    sid = session["sessionId"]
    tools = await daemon.call(2, "session/command", {"sessionId": sid, "line": "/tools"})
    listed = await daemon.call(3, "session/command", {"sessionId": sid, "line": "/context"})
    raw = await daemon.call(4, "session/command", {"sessionId": sid, "line": "/context json"})
    assert tools["result"]["markdown"] is True
    assert listed["result"]["markdown"] is False
    assert raw["result"]["markdown"] is False  # JSON text, shown as it is
    assert json.loads(raw["result"]["output"])[0]["role"] == "system"
    await daemon.close()


async def test_a_session_nobody_talked_to_leaves_no_file(tmp_path: Path, home: Path) -> None:
    """protocol.md, the stored format: this daemon stores a session with its first kept
    message (the ACP face stores one when it is created; docs/acp.md says why)."""
    daemon = await spawn(tmp_path, home, "-p", "stub")
    sid = (await daemon.call(1, "session/new", {"cwd": str(tmp_path)}))["result"]["sessionId"]
    await daemon.call(2, "session/command", {"sessionId": sid, "line": "/context"})
    assert (await daemon.call(3, "session/list", {}))["result"]["sessions"][0]["sessionId"] == sid
    await daemon.call(4, "shutdown")
    await daemon.close()
    sessions = home / ".local" / "state" / "elelem" / "sessions"
    assert not sessions.exists() or list(sessions.iterdir()) == []
