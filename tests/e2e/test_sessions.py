"""session/new, list, close, context, command and complete."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


async def test_new_session_describes_itself(client: Client, workdir: Path) -> None:
    result = await within(client.new_session())
    assert len(result["sessionId"]) >= 16
    assert result["cwd"] == str(workdir.resolve())
    assert (result["provider"], result["model"]) == ("stub", "stub")
    assert (result["busy"], result["turns"]) == (False, 0)
    tools = {t["name"]: t["description"] for t in result["tools"]}
    assert {"read", "write", "edit", "execute", "list", "interview"} <= set(tools)
    assert tools["execute"].startswith("Run shell command")
    commands = {c["name"]: c["description"] for c in result["commands"]}
    assert commands["context"] == "Show conversation context"
    assert not any(name.startswith("/") for name in commands)


async def test_new_session_takes_cwd_provider_and_model(client: Client, tmp_path: Path) -> None:
    result = await within(client.new_session(cwd=str(tmp_path), provider="stub", model="m1"))
    assert result["cwd"] == str(tmp_path.resolve())
    assert result["model"] == "m1"


async def test_the_cli_provider_and_model_are_the_default(spawn) -> None:
    client = await spawn("--model", "from-cli")
    assert (await within(client.new_session()))["model"] == "from-cli"


async def test_without_a_provider_the_default_provider_takes_the_cli_model(
    env: dict[str, str], workdir: Path
) -> None:
    async with await Client.spawn("--model", "m2", env=env, cwd=str(workdir)) as client:
        result = await within(client.new_session())
        assert (result["provider"], result["model"]) == ("stub", "m2")
        other = await within(client.new_session(provider="stub", model="m3"))
        assert other["model"] == "m3"


async def test_an_untrusted_session_does_not_load_project_plugins(
    client: Client, workdir: Path
) -> None:
    plugins = workdir / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "hello.py").write_text(
        "def register(plugin):\n"
        "    @plugin.command('hello', 'Say hello')\n"
        "    def hello(session, args):\n"
        "        session.output.say('hello ' + (args or 'you'))\n"
    )
    trusted = await within(client.new_session(trusted=True))
    untrusted = await within(client.new_session(trusted=False))
    unsaid = await within(client.new_session())  # no word from the client: not trusted yet
    assert "hello" in [c["name"] for c in trusted["commands"]]
    assert "hello" not in [c["name"] for c in untrusted["commands"]]
    assert "hello" not in [c["name"] for c in unsaid["commands"]]
    assert unsaid["trust"] == {
        "folder": str(workdir.resolve()),
        "trusted": False,
        "skipped": [str(workdir.resolve() / ".agents" / "plugins")],
        "loads": ["plugin (Python code that runs in the session): .agents/plugins/hello.py"],
    }
    assert trusted["trust"] == {
        "folder": str(workdir.resolve()),
        "trusted": True,
        "skipped": [],
        "loads": [],
    }
    output = await within(client.command(trusted["sessionId"], "/hello there"))
    assert output == {"output": "hello there", "markdown": False, "turnId": 1}


async def test_list_and_close(client: Client) -> None:
    a = (await within(client.new_session()))["sessionId"]
    b = (await within(client.new_session()))["sessionId"]
    await within(client.turn(a, "!echo hi"))
    everything = await within(client.list_sessions())
    listed = {s["sessionId"]: s for s in everything if not s.get("stored")}
    assert set(listed) == {a, b}
    assert listed[a]["turns"] == 1 and listed[a]["busy"] is False
    assert set(listed[a]) == {"sessionId", "cwd", "provider", "model", "busy", "turns"}
    assert await within(client.request("session/close", {"sessionId": a})) == {}
    open_ = [s["sessionId"] for s in await within(client.list_sessions()) if not s.get("stored")]
    assert open_ == [b]  # a is still listed, as stored (see test_stored.py)
    with pytest.raises(RpcError) as error:
        await within(client.close_session(a))
    assert error.value.kind == "unknown_session"


async def test_context_is_the_system_prompt_and_the_kept_messages(
    client: Client, session: str, workdir: Path
) -> None:
    (workdir / "AGENTS.md").write_text("Use tabs.")
    before = await within(client.context(session))
    assert [m["role"] for m in before] == ["system"]
    assert before[0]["content"].endswith("Use tabs.")
    await within(client.turn(session, "!echo hi"))
    after = await within(client.context(session))
    assert after[1:] == [
        {"role": "user", "content": "!echo hi"},
        {"role": "assistant", "content": "hi"},
    ]


async def test_commands_answer_with_their_output(client: Client, session: str) -> None:
    await within(client.turn(session, "!echo hi"))
    listed = await within(client.command(session, "/context"))
    assert listed["output"].splitlines()[1:] == [
        "  2. user: !echo hi (~2 tokens)",
        "  3. assistant: hi (~1 tokens)",
    ]
    assert listed["turnId"] == 2
    cleared = await within(client.command(session, "/clear"))
    assert cleared["output"] == "  → context cleared"
    assert len(await within(client.context(session))) == 1
    assert listed["markdown"] is False and cleared["markdown"] is False
    tools = await within(client.command(session, "/tools"))
    assert "- **execute** - Run shell command" in tools["output"]
    assert tools["markdown"] is True  # the daemon knows what the command printed


async def test_an_unknown_command_names_the_known_ones(client: Client, session: str) -> None:
    result = await within(client.command(session, "/nope"))
    assert result["output"].startswith("error: unknown command: /nope. Commands: /help")


async def test_exit_is_left_to_the_client(client: Client, session: str) -> None:
    result = await within(client.command(session, "/exit"))
    assert result == {"output": "", "markdown": False, "turnId": 1, "exit": True}
    assert [s["sessionId"] for s in await within(client.list_sessions())] == [session]


async def test_a_failing_provider_switch_is_command_output(client: Client, session: str) -> None:
    result = await within(client.command(session, "/provider nosuch"))
    assert result["output"].startswith('error: unknown provider: "nosuch"')


async def test_compact_runs_a_turn_whose_events_carry_the_commands_turn_id(
    client: Client, session: str
) -> None:
    await within(client.turn(session, "!echo hi"))
    result = await within(client.command(session, "/compact"))
    assert result["output"] == "  → compacted: 2 messages became 1"
    events = [n for n in client.notifications if n["params"].get("turnId") == 2]
    assert events and events[0]["method"] == "event/thinking"
    context = await within(client.context(session))
    assert context[1]["content"].startswith("Context: ")


async def test_complete_command_names_and_arguments(client: Client, session: str) -> None:
    assert await within(client.complete(session, "/co")) == ["/context", "/compact", "/cost"]
    assert await within(client.complete(session, "/context j")) == ["json"]
    assert await within(client.complete(session, "/provider ")) == [
        "anthropic",
        "ollama",
        "openai",
        "stub",
    ]
    assert await within(client.complete(session, "hello")) == []


async def test_complete_file_names_under_the_session_cwd(
    client: Client, session: str, workdir: Path
) -> None:
    (workdir / "src").mkdir()
    (workdir / "src" / "main.py").write_text("")
    (workdir / "setup.cfg").write_text("")
    assert await within(client.complete(session, "read s")) == ["setup.cfg", "src/"]
    assert await within(client.complete(session, "see src/ma")) == ["src/main.py"]


async def test_a_compact_whose_provider_is_dead_changes_nothing(
    spawn, env: dict[str, str], tmp_path: Path
) -> None:
    """The summary request fails: the history is untouched, the error is shown, and
    nothing is written to the stored session (byte for byte)."""
    import socket

    with socket.socket() as s:  # a port nothing listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "none"}
    client = await spawn(env={**env, **dead, "ELELEM_RETRIES": "0"})
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    await within(client.turn(session, "!echo one"))
    await within(client.turn(session, "!echo two"))
    await within(client.command(session, "/provider openai"))
    stored = next(Path(env["XDG_STATE_HOME"]).rglob(f"{session}.jsonl"))
    before, context = stored.read_bytes(), await within(client.context(session))
    result = await within(client.command(session, "/compact"), 30)
    lines = result["output"].splitlines()
    assert lines[0].startswith("error: openai: cannot connect to http://127.0.0.1:")
    assert lines[1:] == ["compact failed: the conversation is kept (/clear starts over)"]
    assert await within(client.context(session)) == context
    assert stored.read_bytes() == before
