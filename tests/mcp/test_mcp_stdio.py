"""Real stdio MCP servers (servers/demo.py on the SDK's MCPServer) in a real session:
tools, results, permissions, prompts, resources, list_changed, cancellation, crashes,
hangs, garbage, environment, logs, reload, and no process left behind."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_support import (  # noqa: F401 (fixtures)
    allow_mcp,
    marks,
    project,
    quick_retries,
    sessions,
    status_of,
    stdio,
    until,
)

from elelem_daemon.io import NullInput
from elelem_daemon.mcp.config import from_acp


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def test_tools_join_the_toolbox_and_answer(sessions, project: Path) -> None:
    allow_mcp()
    session = await sessions(project, {"demo": stdio()})
    assert status_of(session, "demo")["state"] == "ready"
    for name in ("demo__add", "demo__shout", "demo__weather", "demo__fail", "demo__picture"):
        assert name in session.toolbox
    add = session.toolbox.resolve("demo__add")
    assert add.description == "Add two integers"
    assert add.schema["properties"]["a"]["type"] == "integer"

    text = await session.toolbox.run("demo__shout", {"text": "hi"})
    assert text.ok and text.payload["content"].startswith("HI!")
    weather = await session.toolbox.run("demo__weather", {"city": "Oslo"})
    assert weather.payload["content"] == json.dumps(
        {"city": "Oslo", "celsius": 21, "sky": "clear"}, indent=2
    )
    failed = await session.toolbox.run("demo__fail", {"why": "on purpose"})
    assert failed.to_dict() == {
        "error": "Error executing tool fail: it failed: on purpose",
        "ok": False,
    }
    picture = await session.toolbox.run("demo__picture", {})
    assert "[image: image/png, 32 bytes]" in picture.payload["content"]
    assert picture.attachments[0]["mimeType"] == "image/png"


async def test_a_turn_calls_an_mcp_tool_like_any_other(sessions, project: Path, output) -> None:
    allow_mcp()
    session = await sessions(project, {"demo": stdio()})
    await session.turn('!tool demo__add {"a": 2, "b": 40}')
    results = [value for kind, value in output.calls if kind == "result"]
    assert results[-1]["ok"] is True and "42" in results[-1]["content"]


async def test_our_validation_runs_first(sessions, project: Path) -> None:
    allow_mcp()
    session = await sessions(project, {"demo": stdio()})
    result = await session.toolbox.run("demo__add", {"a": "two", "b": 1})
    assert result.to_dict() == {"error": "value at `/a` is not an integer", "ok": False}


async def test_mcp_tools_ask_by_default_and_rules_apply_by_name(sessions, project: Path) -> None:
    session = await sessions(project, {"demo": stdio()}, input=NullInput(["allow"]))
    asked = await session.toolbox.run("demo__add", {"a": 1, "b": 1})
    assert asked.ok  # the user said allow
    unanswered = await session.toolbox.run("demo__add", {"a": 1, "b": 1})
    assert "no one could answer" in unanswered.error
    allow_mcp("demo__* deny\n")
    session.reload()
    assert (await session.toolbox.run("demo__add", {"a": 1, "b": 1})).error == (
        "Permission denied: demo__add"
    )
    allow_mcp("demo__a* allow\n")
    session.reload()
    assert (await session.toolbox.run("demo__add", {"a": 1, "b": 1})).ok


async def test_a_prompt_is_a_slash_command(sessions, project: Path, output) -> None:
    session = await sessions(project, {"demo": stdio()})
    assert "/demo:review" in session.commands
    await session.command("/demo:review src/app.py")
    assert session.conversation.last["role"] == "assistant"
    prompts = [m["content"] for m in session.conversation if m["role"] == "user"]
    assert prompts[-1] == "Review src/app.py, looking for bugs."
    await session.command("/demo:review focus=speed main.py")
    assert [m["content"] for m in session.conversation if m["role"] == "user"][-1] == (
        "Review main.py, looking for speed."
    )
    said = (await session.command("/demo:review")).output
    assert "missing path; usage: /demo:review PATH [FOCUS]" in said


async def test_resources_are_read_through_the_resource_tool(sessions, project: Path) -> None:
    allow_mcp()
    session = await sessions(project, {"demo": stdio()})
    listed = await session.toolbox.run("resource", {"server": "demo"})
    assert listed.payload["resources"][0]["uri"] == "note://hello"
    read = await session.toolbox.run("resource", {"server": "demo", "uri": "note://hello"})
    assert read.payload == {"uri": "note://hello", "content": "Hello from a resource"}
    missing = await session.toolbox.run("resource", {"server": "demo", "uri": "note://none"})
    assert not missing.ok and "MCP server demo" in missing.error
    assert "not one of" in (await session.toolbox.run("resource", {"server": "zz"})).error


async def test_list_changed_refreshes_the_toolbox(sessions, project: Path) -> None:
    allow_mcp()
    session = await sessions(project, {"demo": stdio()})
    heard = []
    session.mcp.listeners.append(lambda manager: heard.append(manager.status()))
    assert "demo__fresh" not in session.toolbox
    assert (await session.toolbox.run("demo__grow", {"name": "fresh"})).ok
    await until(lambda: "demo__fresh" in session.toolbox)
    assert (await session.toolbox.run("demo__fresh", {})).payload["content"] == "I am fresh"
    assert any("demo__fresh" in s["servers"][0]["tools"] for s in heard)


async def test_a_cancelled_turn_cancels_the_call_on_the_server(
    sessions, project: Path, marks: Path
) -> None:
    allow_mcp()
    session = await sessions(project, {"demo": stdio()})
    turn = asyncio.ensure_future(session.turn('!tool demo__slow {"seconds": 300}'))
    await until(lambda: (marks / "slow-started").exists())
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    await until(lambda: (marks / "cancelled").exists())  # the server saw notifications/cancelled
    assert status_of(session, "demo")["state"] == "ready"
    assert (await session.toolbox.run("demo__add", {"a": 1, "b": 2})).ok


async def test_a_crash_mid_call_is_an_error_and_the_server_comes_back(
    sessions, project: Path
) -> None:
    allow_mcp()
    session = await sessions(project, {"demo": stdio()})
    first = status_of(session, "demo")["pid"]
    crashed = await session.toolbox.run("demo__crash", {})
    assert not crashed.ok
    assert "MCP server demo closed the connection (exit status 3" in crashed.error
    await until(
        lambda: (
            status_of(session, "demo")["state"] == "ready"
            and status_of(session, "demo")["pid"] not in (None, first)
        )
    )
    assert not alive(first)
    assert (await session.toolbox.run("demo__add", {"a": 1, "b": 2})).ok


async def test_a_server_that_never_answers_initialize(sessions, project: Path) -> None:
    session = await sessions(project, {"hang": stdio("hang.py", timeout=1)})
    status = status_of(session, "hang")
    assert status["state"] == "failed"
    assert "did not answer initialize within 1s" in status["error"]
    assert status["attempts"] == 2 and status["tools"] == []
    assert not [name for name in session.toolbox.names() if name.startswith("hang__")]
    assert session.mcp.servers["hang"].process.returncode is not None  # it was stopped


async def test_a_server_that_writes_garbage(sessions, project: Path) -> None:
    session = await sessions(project, {"junk": stdio("garbage.py", timeout=1)})
    status = status_of(session, "junk")
    assert status["state"] == "failed"
    assert "not JSON-RPC" in status["error"] and "hello, I am not JSON" in status["error"]
    log = Path(status["log"]).read_text()
    assert "stdout, not JSON-RPC, dropped" in log


async def test_a_noisy_server_still_works_and_keeps_our_output_clean(
    sessions, project: Path, capfd
) -> None:
    allow_mcp()
    session = await sessions(project, {"noisy": stdio("noisy.py")})
    assert status_of(session, "noisy")["state"] == "ready"
    assert (await session.toolbox.run("noisy__add", {"a": 1, "b": 2})).ok
    out, err = capfd.readouterr()
    assert "noisy: ready" not in out + err and "please wait" not in out + err
    log = Path(status_of(session, "noisy")["log"])
    assert "noisy: ready" in log.read_text()
    assert oct(log.stat().st_mode & 0o777) == "0o600"


async def test_a_command_that_does_not_exist(sessions, project: Path) -> None:
    session = await sessions(project, {"gone": {"command": "no-such-mcp-server-here"}})
    status = status_of(session, "gone")
    assert status["state"] == "failed"
    assert status["error"] == "command not found: no-such-mcp-server-here"
    said = (await session.command("/mcp")).output
    assert "gone" in said and "command not found" in said and "/mcp restart gone" in said


async def test_restart_brings_a_failed_server_back(sessions, project: Path) -> None:
    script = project / "late.py"
    script.write_text("import sys; sys.exit(1)\n")
    session = await sessions(project, {"late": {"command": sys.executable, "args": [str(script)]}})
    assert status_of(session, "late")["state"] == "failed"
    script.write_text(
        f"import runpy, sys; sys.argv = [{str(stdio()['args'][0])!r}]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    said = (await session.command("/mcp restart late")).output
    assert "restarting late" in said
    await until(lambda: status_of(session, "late")["state"] == "ready")


async def test_the_server_gets_no_secret_unless_its_config_names_it(
    sessions, project: Path, marks: Path, monkeypatch
) -> None:
    allow_mcp()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never")
    monkeypatch.setenv("MY_GH_TOKEN_FOR_TEST", "ghp-given")
    server = stdio(env={"GITHUB_TOKEN": "${MY_GH_TOKEN_FOR_TEST}", "MARKS": str(marks)})
    session = await sessions(project, {"demo": server})
    assert (await session.toolbox.run("demo__environment", {})).ok
    env = json.loads((marks / "env").read_text())
    assert "ANTHROPIC_API_KEY" not in env
    assert env["GITHUB_TOKEN"] == "ghp-given"
    assert env["PATH"] == os.environ["PATH"]  # the rest of the environment is there


async def test_no_process_is_left_after_the_session_closes(
    sessions, project: Path, marks: Path
) -> None:
    allow_mcp()
    session = await sessions(project, {"demo": stdio()})
    pid = status_of(session, "demo")["pid"]
    assert (await session.toolbox.run("demo__spawn", {})).ok
    child = int((marks / "child").read_text())
    assert alive(pid) and alive(child)
    await session.mcp.aclose()
    await until(lambda: not alive(pid) and not alive(child), 15)
    assert [n for n in session.toolbox.names() if "__" in n] == []


async def test_reload_keeps_the_running_servers(sessions, project: Path) -> None:
    session = await sessions(project, {"demo": stdio()})
    pid = status_of(session, "demo")["pid"]
    session.reload()
    assert "demo__add" in session.toolbox and "/demo:review" in session.commands
    assert status_of(session, "demo")["pid"] == pid


async def test_reload_picks_up_a_changed_config(sessions, project: Path) -> None:
    session = await sessions(project, {"demo": stdio()})
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": stdio()}}))
    session.reload()
    assert "demo__add" not in session.toolbox
    assert await session.mcp.ready(120)
    await until(lambda: "other__add" in session.toolbox)


async def test_a_face_adds_servers_in_acp_form(sessions, project: Path) -> None:
    session = await sessions(project)
    assert getattr(session, "mcp", None) is None  # no files: no manager, no SDK
    from elelem_daemon.mcp.manager import manager_of

    servers, problems = from_acp(
        [{"name": "zed", "command": sys.executable, "args": stdio()["args"], "env": []}]
    )
    manager_of(session).add(servers, problems)
    assert await session.mcp.ready(120)
    assert "zed__add" in session.toolbox
    assert status_of(session, "zed")["source"] == "client"


async def test_an_untrusted_project_starts_no_server(sessions, project: Path) -> None:
    session = await sessions(project, {"demo": stdio()}, project=False)
    assert getattr(session, "mcp", None) is None


def test_a_session_without_servers_never_imports_the_sdk(project: Path) -> None:
    code = (
        "import asyncio, sys\n"
        "from elelem_daemon.plugins import core_registry\n"
        "from elelem_daemon.session import start\n"
        "async def main():\n"
        f"    s = start(core_registry(entry_points=False), 'stub', cwd={str(project)!r})\n"
        "    await s.command('/mcp')\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in ('mcp', 'mcp_types', 'pydantic', 'httpx2') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


async def test_status_is_the_documented_shape(sessions, project: Path) -> None:
    session = await sessions(project, {"demo": stdio()})
    status = status_of(session, "demo")
    assert set(status) == {
        "name",
        "source",
        "origin",
        "transport",
        "target",
        "state",
        "error",
        "attempts",
        "retryAt",
        "pid",
        "server",
        "tools",
        "prompts",
        "resources",
        "problems",
        "log",
        "authorizeUrl",
    }
    assert status["server"] == {"name": "demo", "version": "1.0"}
    assert status["prompts"] == ["/demo:review"] and status["resources"] is True
    json.dumps(session.mcp.status())  # JSON all the way
    said = (await session.command("/mcp demo")).output
    assert "demo__add" in said and "/demo:review" in said


def test_the_sdk_loads_off_the_event_loop_after_the_session_is_ready(project: Path) -> None:
    (project / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"demo": stdio(), "web": {"type": "http", "url": "http://127.0.0.1:9/"}}}
        )
    )
    code = (
        "import asyncio, sys\n"
        "from elelem_daemon.plugins import core_registry\n"
        "from elelem_daemon.session import start\n"
        "async def main():\n"
        f"    s = start(core_registry(entry_points=False), 'stub', cwd={str(project)!r})\n"
        "    print('mcp' in sys.modules, 'pydantic' in sys.modules, flush=True)\n"
        "    assert await s.mcp.ready(120), s.mcp.status()\n"
        "    print('mcp' in sys.modules, s.mcp.status()['servers'][0]['state'], flush=True)\n"
        "    await s.mcp.aclose()\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, "ELELEM_MCP_RETRIES": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["False False", "True ready"]


async def test_a_server_that_exits_at_start_says_why(sessions, project: Path) -> None:
    script = project / "broken.py"
    script.write_text(
        "import sys\nprint('DATABASE_URL is not set', file=sys.stderr)\nsys.exit(1)\n"
    )
    session = await sessions(project, {"db": {"command": sys.executable, "args": [str(script)]}})
    status = status_of(session, "db")
    assert status["state"] == "failed"
    assert status["error"] == (
        "closed the connection during start-up (exit status 1); stderr: DATABASE_URL is not set"
    )


async def test_a_line_too_long_is_dropped_and_the_server_still_works(
    sessions, project: Path
) -> None:
    allow_mcp()
    session = await sessions(project, {"long": stdio("longline.py")})
    assert status_of(session, "long")["state"] == "ready"
    assert (await session.toolbox.run("long__add", {"a": 2, "b": 2})).payload["content"] == "4"
    process = session.mcp.servers["long"].process
    assert process.garbage == 2 and "longer than" in process.sample


async def test_a_call_that_is_never_answered_times_out(sessions, project: Path) -> None:
    allow_mcp()
    session = await sessions(project, {"deaf": stdio("deaf.py", toolTimeout=1)})
    quiet = await session.toolbox.run("deaf__wait", {})
    assert quiet.error == "MCP server deaf did not answer within 1s (the request was cancelled)"
    # the server reads no more: a big request cannot even be written; the call still ends
    stuck = await session.toolbox.run("deaf__wait", {"blob": "x" * (4 << 20)})
    assert "MCP server deaf did not answer within 1s" in stuck.error
