"""The servers a client passes, through each real face (issue 19's wiring): the daemon's
`mcpServers` on `session/new` and `session/load` (the `mcp` status, `event/mcp`, the
OAuth step as `input/ask`, the servers stopped on `session/close` and SIGTERM), ACP's
`mcpServers` from the official Python SDK client (stdio and Streamable HTTP, the
status in `_meta.elelem.mcp`, prompts re-advertised as commands, the OAuth step as a
message), and the terminal (`elelem ask` waits for its servers, prints the OAuth URL)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_support import (  # noqa: F401 (fixtures)
    SERVERS,
    free_port,
    http_server,
    listening,
    project,
    quick_retries,
    stdio,
    until,
)

from elelem_daemon.jsonrpc.client import Client, RpcError
from elelem_daemon.processes.procs import descendants

sys.path.insert(0, str(Path(__file__).parents[1] / "acp_sdk"))
from acp_editor import Editor, acp, daemon  # noqa: E402


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    config = home / ".config" / "elelem"
    config.mkdir(parents=True)
    (config / "permissions").write_text("demo__* allow\nsecure__* allow\n")
    values = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    return {
        **values,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "ELELEM_MCP_TIMEOUT": "60",
        "ELELEM_PROVIDER": "stub",
    }


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def demo_pids(face: int) -> set[int]:
    found = set()
    for pid in descendants(face):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"demo.py" in f.read():
                    found.add(pid)
        except OSError:
            continue
    return found


def state(status: dict[str, Any], name: str = "demo") -> str:
    return next(s["state"] for s in status["servers"] if s["name"] == name)


def mcp_events(client: Client, session: str) -> list[dict[str, Any]]:
    return [
        n["params"]
        for n in client.notifications
        if n["method"] == "event/mcp" and n["params"]["sessionId"] == session
    ]


async def ready_event(client: Client, session: str, name: str = "demo") -> dict[str, Any]:
    def ready() -> Any:
        events = mcp_events(client, session)
        return events and state(events[-1]["mcp"], name) == "ready" and events[-1]

    return await until(ready, 120, 0.05)


async def browser(url: str) -> None:
    """The user opens the URL and approves; the authorization server redirects."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=30, trust_env=False) as client:
        answer = await client.get(url)
    assert answer.status_code == 200 and "Authorized." in answer.text


async def authed_server(port: int) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVERS / "authed.py"),
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    await listening(port)
    return process


# -- the daemon ------------------------------------------------------------------------
async def test_daemon_session_new_takes_mcp_servers(env: dict[str, str], project: Path) -> None:
    client = await Client.spawn("--provider", "stub", env=env, cwd=str(project))
    try:
        await asyncio.wait_for(client.initialize(), 30)
        opened = await client.new_session(cwd=str(project), mcpServers={"demo": stdio()})
        sid = opened["sessionId"]
        (server,) = opened["mcp"]["servers"]
        assert (server["name"], server["source"], server["transport"]) == (
            "demo",
            "client",
            "stdio",
        )
        assert server["state"] == "starting" and opened["mcp"]["problems"] == []
        ready = await ready_event(client, sid)
        assert ready["turnId"] is None
        assert "demo__add" in next(s for s in ready["mcp"]["servers"])["tools"]
        events: list[dict[str, Any]] = []
        await client.turn(sid, '!tool demo__add {"a": 20, "b": 22}', events.append)
        results = [e["params"] for e in events if e["method"] == "event/result"]
        assert results[0]["ok"] is True and "42" in json.dumps(results[0]["result"])
        shown = (await client.command(sid, "/mcp"))["output"]
        assert shown.startswith("- **demo** (client, stdio): ready, ")
        prompt = await client.command(sid, "/demo:review app.py")  # a prompt: a command
        assert prompt["turnId"] == 3
        context = await client.context(sid)
        assert context[-2]["content"] == "Review app.py, looking for bugs."
        pids = demo_pids(client.process.pid)
        assert pids
        await client.close_session(sid)  # closing the session stops its servers
        await until(lambda: not any(running(pid) for pid in pids), 30)
    finally:
        await client.close()


async def test_daemon_mcp_servers_as_a_list_bad_entries_and_load(
    env: dict[str, str], project: Path
) -> None:
    client = await Client.spawn("--provider", "stub", env=env, cwd=str(project))
    try:
        await asyncio.wait_for(client.initialize(), 30)
        with pytest.raises(RpcError) as shape:
            await client.new_session(cwd=str(project), mcpServers="demo")
        assert shape.value.kind == "invalid_params"
        assert shape.value.data["errors"] == [
            "mcpServers: expected an array or an object, got a string"
        ]
        listed = [{"name": "demo", **stdio(), "env": []}, {"name": "broken"}]
        opened = await client.new_session(cwd=str(project), mcpServers=listed)
        assert [s["name"] for s in opened["mcp"]["servers"]] == ["demo"]
        (problem,) = opened["mcp"]["problems"]
        assert problem.startswith("session/new: mcpServers[1]")
        sid = opened["sessionId"]
        await ready_event(client, sid)
        await client.turn(sid, "!echo kept")  # stored from here on
        await client.close_session(sid)
        loaded = await client.load_session(
            sid,
            mcpServers={"again": {"command": sys.executable, "args": [str(SERVERS / "demo.py")]}},
        )
        assert [(s["name"], s["origin"]) for s in loaded["mcp"]["servers"]] == [
            ("again", "session/load")
        ]
        await ready_event(client, sid, "again")
    finally:
        await client.close()


async def test_daemon_sigterm_leaves_no_server(env: dict[str, str], project: Path) -> None:
    client = await Client.spawn("--provider", "stub", env=env, cwd=str(project))
    pids: set[int] = set()
    try:
        await asyncio.wait_for(client.initialize(), 30)
        first = await client.new_session(cwd=str(project), mcpServers={"demo": stdio()})
        second = await client.new_session(cwd=str(project), mcpServers={"demo": stdio()})
        await ready_event(client, first["sessionId"])
        await ready_event(client, second["sessionId"])
        pids = demo_pids(client.process.pid)
        assert len(pids) >= 2
        client.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(client.process.wait(), 30) == 128 + signal.SIGTERM
        await until(lambda: not any(running(pid) for pid in pids), 30)
    finally:
        if client.process.returncode is None:
            await client.close()
        for pid in pids:
            if running(pid):
                os.kill(pid, signal.SIGKILL)


async def test_daemon_asks_the_user_to_authorize(env: dict[str, str], project: Path) -> None:
    port = free_port()
    process = await authed_server(port)
    asked: list[dict[str, Any]] = []

    async def on_ask(params: dict[str, Any]) -> str:
        asked.append(params)
        await browser(params["url"])
        return "open"

    client = await Client.spawn("--provider", "stub", env=env, cwd=str(project), on_ask=on_ask)
    try:
        await asyncio.wait_for(client.initialize(), 30)
        servers = {"secure": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}
        sid = (await client.new_session(cwd=str(project), mcpServers=servers))["sessionId"]
        await ready_event(client, sid, "secure")
        (question,) = asked
        assert question["kind"] == "authorize" and question["server"] == "secure"
        assert question["url"].startswith(f"http://127.0.0.1:{port}/authorize?")
        assert question["sessionId"] == sid and question["options"] == ["open"]
        assert question["url"] in question["prompt"]
        waited = [e for e in mcp_events(client, sid) if state(e["mcp"], "secure") == "needs-auth"]
        assert waited and waited[0]["mcp"]["servers"][0]["authorizeUrl"] == question["url"]
        events: list[dict[str, Any]] = []
        await client.turn(sid, '!tool secure__add {"a": 1, "b": 1}', events.append)
        assert [e["params"]["ok"] for e in events if e["method"] == "event/result"] == [True]
    finally:
        await client.close()
        process.kill()


# -- ACP -------------------------------------------------------------------------------
async def test_acp_sdk_client_passes_stdio_and_http_servers(
    tmp_path: Path, env: dict[str, str], project: Path, http_server: Any
) -> None:
    from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio

    web = await http_server("http")
    editor = Editor()
    servers = [
        McpServerStdio(
            name="demo",
            command=sys.executable,
            args=[str(SERVERS / "demo.py")],
            env=[EnvVariable(name="DEMO_MODE", value="1")],
        ),
        HttpMcpServer(type="http", name="web", url=web.url, headers=[]),
    ]
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / ".config" / "elelem").mkdir(parents=True, exist_ok=True)
    (tmp_path / "home" / ".config" / "elelem" / "permissions").write_text("*__* allow\n")
    async with daemon(tmp_path, editor, env={"ELELEM_MCP_TIMEOUT": "60"}) as (conn, process):
        session = await conn.new_session(cwd=str(project), mcp_servers=servers)
        status = session.field_meta["elelem"]["mcp"]
        assert [(s["name"], s["transport"], s["source"]) for s in status["servers"]] == [
            ("demo", "stdio", "client"),
            ("web", "http", "client"),
        ]

        def advertised() -> set[str]:
            updates = editor.of("available_commands_update")
            return {c.name for c in updates[-1].available_commands} if updates else set()

        # each server's prompt becomes a command once it is up: the commands are sent again
        await until(lambda: {"demo:review", "web:review"} <= advertised(), 120, 0.05)
        sid = session.session_id
        editor.updates.clear()
        async with asyncio.timeout(60):
            await conn.prompt(session_id=sid, prompt=[acp.text_block("/mcp")])
        assert "**demo** (client, stdio): ready" in editor.said()
        assert "**web** (client, http): ready" in editor.said()
        for tool in ("demo__add", "web__add"):
            editor.updates.clear()
            text = f'!tool {tool} {{"a": 2, "b": 3}}'
            async with asyncio.timeout(60):
                await conn.prompt(session_id=sid, prompt=[acp.text_block(text)])
            done = editor.of("tool_call_update")
            assert (
                done and done[-1].status == "completed" and "5" in json.dumps(done[-1].raw_output)
            )
        pids = demo_pids(process.pid)
        assert pids
    await until(lambda: not any(running(pid) for pid in pids), 30)  # the face ended: gone


async def test_acp_initialize_advertises_mcp_transports(tmp_path: Path) -> None:
    from acp.schema import ClientCapabilities

    editor = Editor()
    async with daemon(tmp_path, editor) as (conn, _):
        answer = await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
    caps = answer.agent_capabilities.mcp_capabilities
    assert (caps.http, caps.sse) == (True, True)


async def test_acp_says_where_to_authorize(tmp_path: Path, project: Path) -> None:
    from acp.schema import HttpMcpServer

    port = free_port()
    process = await authed_server(port)
    editor = Editor()
    (tmp_path / "home" / ".config" / "elelem").mkdir(parents=True, exist_ok=True)
    (tmp_path / "home" / ".config" / "elelem" / "permissions").write_text("*__* allow\n")
    try:
        async with daemon(tmp_path, editor, env={"ELELEM_MCP_TIMEOUT": "60"}) as (conn, _):
            url = f"http://127.0.0.1:{port}/mcp"
            server = HttpMcpServer(type="http", name="secure", url=url, headers=[])
            session = await conn.new_session(cwd=str(project), mcp_servers=[server])
            said = await until(lambda: re.search(r"open (\S+) in your browser", editor.said()), 120)
            assert "MCP server secure needs authorization" in editor.said()
            await browser(said[1])
            await until(
                lambda: (
                    "secure:review"
                    in {
                        c.name
                        for u in editor.of("available_commands_update")
                        for c in u.available_commands
                    }
                ),
                120,
                0.05,
            )
            editor.updates.clear()
            text = '!tool secure__add {"a": 1, "b": 1}'
            async with asyncio.timeout(60):
                await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(text)])
            assert editor.of("tool_call_update")[-1].status == "completed"
    finally:
        process.kill()


# -- the terminal ----------------------------------------------------------------------
async def ask(env: dict[str, str], cwd: Path, *words: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "elelem_daemon",
        "ask",
        *words,
        env=env,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


def trust(env: dict[str, str], folder: Path) -> None:
    """The user trusted the folder before (its .mcp.json loads only then: `elelem ask`
    asks nothing)."""
    kept = Path(env["XDG_CONFIG_HOME"]) / "elelem" / "trusted"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(f"{folder.resolve()}\n")


async def test_elelem_ask_waits_for_its_servers(env: dict[str, str], project: Path) -> None:
    trust(env, project)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": stdio()}}))
    process = await ask(env, project, '!tool demo__add {"a": 40, "b": 2}')
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    assert out.decode() == "done.\n"
    # the call ran and succeeded: its result, then the tick (a failure prints the error,
    # such as "not connected")
    assert "+ demo__add(a=40, b=2)\n  42\n  ✓\nconsidering the request\ndone." in err.decode()


async def test_elelem_ask_prints_where_to_authorize_and_waits(
    env: dict[str, str], project: Path
) -> None:
    port = free_port()
    server = await authed_server(port)
    servers = {"secure": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}
    trust(env, project)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    process = await ask(env, project, '!tool secure__add {"a": 1, "b": 2}')
    assert process.stderr is not None
    try:
        lines: list[str] = []
        while not any("needs authorization" in line for line in lines):
            line = await asyncio.wait_for(process.stderr.readline(), 120)
            assert line, "".join(lines)
            lines.append(line.decode())
        url = re.search(r"open (\S+)", lines[-1])[1]
        assert lines[-1].startswith("MCP server secure needs authorization: open http://")
        await browser(url)
        out = await asyncio.wait_for(process.stdout.read(), 120)
        rest = await asyncio.wait_for(process.stderr.read(), 30)
        assert await process.wait() == 0
        assert out.decode() == "done.\n"
        assert "+ secure__add(a=1, b=2)\n  3\n  ✓\nconsidering the request\ndone." in rest.decode()
    finally:
        if process.returncode is None:
            process.kill()
        server.kill()
