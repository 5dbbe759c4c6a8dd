"""Trust is asked once per folder, in every face (issue 13, item 3). A folder is
untrusted until the user trusts it (the trusted-folders file,
`$XDG_CONFIG_HOME/elelem/trusted`): until then not one line of its plugins runs, its
rules and MCP servers are not read, and `session/new` says what was skipped. The
daemon takes `trusted` from the editor (and `session/trust`), the ACP face takes
`_meta.trusted`, else asks with a form or says in the chat how to trust it, the terminal
asks once; `/trust` typed and `elelem trust` trust it in every face. No "approve every
permission" answer ever trusts a folder, and every question lists what it would load
(issue 29).
AGENTS.md is read up to the repository's root, not above it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.async_pty import Terminal
from support.ndjson import Wire

from elelem_daemon.jsonrpc.client import RpcError

from .conftest import plugin, within

pytestmark = pytest.mark.e2e

TOOL = """
def register(plugin):
    @plugin.tool("{name}", "a {name} tool", {{}})
    def run(session, args):
        return "{name}"
"""

SPY = """
from pathlib import Path

Path(__file__).with_suffix(".ran").touch()  # runs the moment the file is loaded


def register(plugin):
    pass
"""


@pytest.fixture
def plugins(env: dict[str, str], workdir: Path) -> dict[str, Path]:
    home = Path(env["HOME"])
    return {
        "mine": plugin(home, "mine", TOOL.format(name="mine")),
        "theirs": plugin(workdir, "theirs", TOOL.format(name="theirs")),
        "broken": plugin(workdir, "broken", "raise ValueError('nope')\n"),
        "spy": plugin(workdir, "spy", SPY),
    }


def ran(plugins: dict[str, Path]) -> bool:
    return plugins["spy"].with_suffix(".ran").exists()


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in result["plugins"]}


async def until(check: Any, every: float = 0.05) -> None:
    while not check():
        await asyncio.sleep(every)


def trusted_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_CONFIG_HOME"]) / "elelem" / "trusted"


def everything_to_trust(workdir: Path) -> list[str]:
    """Rules, modes and MCP servers beside the plugins; their paths, as reported."""
    (workdir / ".agents" / "permissions").write_text("execute deny\n")
    (workdir / ".agents" / "modes").mkdir()
    (workdir / ".agents" / "modes" / "review.md").write_text("Review only.\n")
    (workdir / ".mcp.json").write_text('{"mcpServers": {}}\n')
    folder = workdir.resolve()
    return [str(folder / name) for name in (".agents/plugins", ".agents/permissions",
                                            ".agents/modes", ".mcp.json")]  # fmt: skip


# -- the daemon ----------------------------------------------------------------------
async def test_a_trusted_session_reports_every_plugin_and_its_origin(
    client: Any, workdir: Path, plugins: dict[str, Path]
) -> None:
    result = await within(client.new_session(cwd=str(workdir), trusted=True))
    found = by_name(result)
    assert found["shell"] == {
        "name": "shell",
        "source": "builtin",
        "path": "elelem_daemon.builtins.shell",
        "error": None,
    }
    assert found["mine"] == {
        "name": "mine",
        "source": "user",
        "path": str(plugins["mine"]),
        "error": None,
    }
    assert found["theirs"]["source"] == "project"
    assert found["theirs"]["path"] == str(plugins["theirs"].resolve())
    assert found["broken"]["error"] == "ValueError: nope"
    assert {"mine", "theirs"} <= {t["name"] for t in result["tools"]}
    sources = [p["source"] for p in result["plugins"]]
    assert sources == sorted(sources, key=["builtin", "entry-point", "user", "project"].index)
    assert result["trust"] == {
        "folder": str(workdir.resolve()),
        "trusted": True,
        "skipped": [],
        "loads": [],
    }


@pytest.mark.parametrize("said", [{"trusted": False}, {}], ids=["trusted false", "nothing"])
async def test_an_untrusted_folder_loads_nothing_of_its_own_and_says_so(
    client: Any, workdir: Path, plugins: dict[str, Path], said: dict[str, Any]
) -> None:
    skipped = everything_to_trust(workdir)
    result = await within(client.new_session(cwd=str(workdir), **said))
    assert "project" not in {p["source"] for p in result["plugins"]}
    assert {"mine", "shell"} <= set(by_name(result))  # the user's own still load
    assert not ran(plugins)  # not one line of it ran
    code = "plugin (Python code that runs in the session): .agents/plugins/"
    assert result["trust"] == {
        "folder": str(workdir.resolve()),
        "trusted": False,
        "skipped": skipped,
        "loads": [  # what trusting it would load (issue 29)
            f"{code}broken.py",
            f"{code}spy.py",
            f"{code}theirs.py",
            "permission rule (.agents/permissions): execute deny",
            "mode (.agents/modes): review.md",
        ],
    }
    events: list[Any] = []  # its rules are not read: its `execute deny` does not apply
    await within(
        client.turn(result["sessionId"], '!tool execute {"command": "echo ran"}', events.append)
    )
    assert [e["params"]["result"]["content"] for e in events if e["method"] == "event/result"] == [
        "ran\n"
    ]


async def test_the_trusted_folders_file_decides_for_a_client_that_says_nothing(
    client: Any, env: dict[str, str], workdir: Path, plugins: dict[str, Path]
) -> None:
    trusted_file(env).write_text(f"# mine\n{workdir.parent.resolve()}\n")  # the parent only
    assert "theirs" not in by_name(await within(client.new_session(cwd=str(workdir))))
    assert not ran(plugins)  # a parent's trust does not cover its subfolders
    trusted_file(env).write_text(f"{workdir.resolve()}\n")  # by hand, after the first run
    held = await within(client.new_session(cwd=str(workdir)))
    assert "theirs" not in by_name(held) and not ran(plugins)  # held until confirmed (#36)
    assert held["held"][0]["entries"] == [str(workdir.resolve())]
    await within(client.command(held["sessionId"], "/trust files"))  # the user confirms
    result = await within(client.new_session(cwd=str(workdir)))
    assert by_name(result)["theirs"]["source"] == "project" and ran(plugins)
    refused = await within(client.new_session(cwd=str(workdir), trusted=False))
    assert "theirs" not in by_name(refused)  # the editor's no wins over the file


async def test_session_trust_loads_the_folder_now_and_remembers_it(
    client: Any, env: dict[str, str], workdir: Path, plugins: dict[str, Path]
) -> None:
    session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
    assert not ran(plugins)
    trusted = await within(client.trust(session))
    assert "theirs" in {t["name"] for t in trusted["tools"]} and ran(plugins)
    assert trusted["trust"]["trusted"] is True and trusted["trust"]["skipped"] == []
    assert trusted_file(env).read_text() == f"{workdir.resolve()}\n"
    events: list[Any] = []
    await within(client.turn(session, "!tool theirs {}", on_event=events.append))
    assert [e["params"]["ok"] for e in events if e["method"] == "event/result"] == [True]
    later = await within(client.new_session(cwd=str(workdir)))
    assert "theirs" in by_name(later)
    await within(client.trust(later["sessionId"]))  # once: the file names it once
    assert trusted_file(env).read_text() == f"{workdir.resolve()}\n"


async def test_a_daemon_client_that_answers_every_ask_yes_trusts_nothing(
    spawn: Any, env: dict[str, str], workdir: Path, plugins: dict[str, Path]
) -> None:
    """Issue 29: trust comes from `session/trust`, the file, the editor's `trusted` or
    the user's typed `/trust`, never from an `input/ask` answer."""
    (Path(env["XDG_CONFIG_HOME"]) / "elelem" / "permissions").write_text("")  # asks again
    asked: list[Any] = []

    def approve(params: Any) -> str | None:
        asked.append(params)
        return (params.get("options") or ["yes"])[0]

    client = await spawn(on_ask=approve)
    await within(client.initialize())
    session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
    await within(client.turn(session, '!tool execute {"command": "echo ran"}'))
    await within(client.turn(session, "!tool theirs {}"))
    assert asked and not any("Trust" in json.dumps(a) for a in asked)
    assert not ran(plugins) and not trusted_file(env).exists()
    said = await within(client.command(session, "/trust"))  # typed by the user
    assert ran(plugins) and f"trusted {workdir.resolve()}" in json.dumps(said)
    assert trusted_file(env).read_text() == f"{workdir.resolve()}\n"


async def test_session_trust_refuses_a_busy_session(client: Any, workdir: Path) -> None:
    session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
    turn = await within(client.start_turn(session, "!stream 1000 10"))
    with pytest.raises(RpcError) as error:
        await within(client.trust(session))
    assert error.value.kind == "session_busy"
    await turn.cancel()
    await within(turn.result())


async def test_trusted_must_be_a_boolean(client: Any, workdir: Path) -> None:
    with pytest.raises(RpcError) as error:
        await within(client.new_session(cwd=str(workdir), trusted="yes"))
    assert error.value.kind == "invalid_params"


async def test_a_loaded_session_keeps_to_its_trust(
    client: Any, workdir: Path, plugins: dict[str, Path]
) -> None:
    session = (await within(client.new_session(cwd=str(workdir), trusted=True)))["sessionId"]
    await within(client.turn(session, "!echo kept"))
    await within(client.close_session(session))
    plugins["spy"].with_suffix(".ran").unlink()
    for params in ({"trusted": False}, {}):
        loaded = await within(client.load_session(session, **params))
        assert "project" not in {p["source"] for p in loaded["plugins"]}
        assert loaded["trust"]["trusted"] is False and loaded["trust"]["skipped"]
        assert not ran(plugins)
        await within(client.close_session(session))


async def test_agents_md_stops_at_the_repository_root(
    client: Any, workdir: Path, tmp_path: Path
) -> None:
    (tmp_path / "AGENTS.md").write_text("Above the repository: obey the README.\n")
    (workdir / ".git").mkdir()
    (workdir / "src").mkdir()
    session = (await within(client.new_session(cwd=str(workdir / "src"))))["sessionId"]
    system = (await within(client.context(session)))[0]["content"]
    assert "obey the README" not in system
    (workdir / "AGENTS.md").write_text("Use tabs.\n")
    system = (await within(client.context(session)))[0]["content"]
    assert system.endswith("Use tabs.")


# -- the ACP face --------------------------------------------------------------------
class Acp:
    """The ACP face on raw NDJSON, answering its permission questions from a script."""

    def __init__(self, wire: Wire, answers: list[str | None]) -> None:
        self.wire = wire
        self.answers = answers  # a permission's optionId, or a form's answer, in turn
        self.asked: list[dict[str, Any]] = []  # permission requests
        self.forms: list[dict[str, Any]] = []  # elicitation/create requests
        self.approve_all = False  # avante's default, `acpx --approve-all`
        self.ids = iter(range(1, 1000))

    @classmethod
    async def start(
        cls, env: dict[str, str], cwd: Path, answers: list[str | None], forms: bool = False
    ) -> Acp:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "elelem_daemon", "daemon", "--acp", "--provider", "stub",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=cwd,
        )  # fmt: skip
        acp = cls(Wire(process), answers)
        capabilities = {"elicitation": {"form": {}}} if forms else {}
        await acp.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
        return acp

    def permission(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        if self.approve_all:  # the first option that allows, at once
            allow = next(o for o in params["options"] if o["kind"].startswith("allow"))
            return {"outcome": {"outcome": "selected", "optionId": allow["optionId"]}}
        answer = self.answers.pop(0) if self.answers else None
        if answer:
            return {"outcome": {"outcome": "selected", "optionId": answer}}
        return {"outcome": {"outcome": "cancelled"}}

    def form(self, params: dict[str, Any]) -> dict[str, Any]:
        self.forms.append(params)
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            return {"action": "decline"}
        return {"action": "accept", "content": {"answer": answer}}

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        ident = next(self.ids)
        await self.wire.send(id=ident, method=method, params=params)
        while True:
            message = await self.wire.read()
            method = message.get("method")
            if method in ("session/request_permission", "elicitation/create"):
                answer = (self.permission if method == "session/request_permission" else
                          self.form)(message["params"])  # fmt: skip
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
                await self.wire.line(json.dumps(reply) + "\n")
            elif message.get("id") == ident and "method" not in message:
                assert "result" in message, message
                return message["result"]

    async def new(self, cwd: Path, **meta: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"cwd": str(cwd), "mcpServers": []}
        if meta:
            params["_meta"] = meta
        return await self.call("session/new", params)

    async def prompt(self, session: str, text: str) -> dict[str, Any]:
        block = {"type": "text", "text": text}
        return await self.call("session/prompt", {"sessionId": session, "prompt": [block]})

    def said(self, session: str) -> str:
        """The agent's message text in the chat so far."""
        return "".join(
            m["params"]["update"]["content"]["text"]
            for m in self.wire.seen
            if m.get("method") == "session/update"
            and m["params"]["sessionId"] == session
            and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
        )

    def tools_run(self) -> list[str]:
        return [
            m["params"]["update"].get("status")
            for m in self.wire.seen
            if m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == "tool_call_update"
        ]

    async def stop(self) -> None:
        self.wire.process.kill()
        await self.wire.process.wait()


async def test_an_acp_client_that_approves_every_permission_leaves_the_folder_untrusted(
    env: dict[str, str], workdir: Path, plugins: dict[str, Path]
) -> None:
    """Issue 29: avante (by default) and `acpx --approve-all` answer every permission
    request `allow` at once; folder trust is not one of them. The chat says once what
    was skipped and how to trust it; `/trust`, typed, trusts it (and keeps it)."""
    acp = await Acp.start(env, workdir, [])
    acp.approve_all = True
    try:
        new = await acp.new(workdir)
        folder = workdir.resolve()
        assert new["_meta"]["elelem"]["trust"]["skipped"] == [str(folder / ".agents" / "plugins")]
        session = new["sessionId"]
        answer = await acp.prompt(session, "!tool theirs {}")
        assert answer["stopReason"] == "end_turn"
        assert acp.asked == [] and not ran(plugins)  # not asked, not loaded
        assert acp.tools_run()[-1] == "failed"  # no such tool
        said = acp.said(session)
        assert f"{folder} is not trusted: not loaded: .agents/plugins" in said
        assert "type /trust to trust it" in said
        assert ".agents/plugins/spy.py" in said and ".agents/plugins/theirs.py" in said
        await acp.prompt(session, "!echo again")
        assert acp.said(session).count("is not trusted") == 1  # once
        assert not ran(plugins) and not trusted_file(env).exists()
        await acp.prompt(session, "/trust")  # the user's own word
        assert ran(plugins) and trusted_file(env).read_text() == f"{folder}\n"
        await acp.prompt(session, "!tool theirs {}")
        assert acp.tools_run()[-1] == "completed"
        names = [c["name"] for c in _last_commands(acp)]
        assert "trust" in names
        again = await acp.new(workdir)  # trusted from the file now: nothing said
        assert again["_meta"]["elelem"]["trust"]["trusted"] is True
        await acp.prompt(again["sessionId"], "!echo hi")
        assert "not trusted" not in acp.said(again["sessionId"]) and acp.asked == []
    finally:
        await acp.stop()


def _last_commands(acp: Acp) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]["availableCommands"]
        for m in acp.wire.seen
        if m.get("method") == "session/update"
        and m["params"]["update"].get("sessionUpdate") == "available_commands_update"
    ][-1]


async def test_elelem_trust_on_the_command_line_trusts_the_folder_for_every_face(
    env: dict[str, str], workdir: Path, plugins: dict[str, Path]
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "trust", env=env, cwd=str(workdir),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await within(process.communicate(), 30)
    assert process.returncode == 0, stderr
    assert f"Trusted {workdir.resolve()}" in stdout.decode()
    assert ".agents/plugins/spy.py" in stdout.decode() and not ran(plugins)  # listed, not run
    assert trusted_file(env).read_text() == f"{workdir.resolve()}\n"
    acp = await Acp.start(env, workdir, [])
    try:
        new = await acp.new(workdir)
        assert new["_meta"]["elelem"]["trust"]["trusted"] is True and ran(plugins)
    finally:
        await acp.stop()


async def test_a_first_prompt_of_slash_trust_trusts_without_a_word_before(
    env: dict[str, str], workdir: Path, plugins: dict[str, Path]
) -> None:
    acp = await Acp.start(env, workdir, [])
    try:
        session = (await acp.new(workdir))["sessionId"]
        await acp.prompt(session, "/trust")
        assert ran(plugins) and "not trusted" not in acp.said(session)
        assert f"trusted {workdir.resolve()}" in acp.said(session)
    finally:
        await acp.stop()


@pytest.mark.parametrize(
    "answer, loads, kept",
    [("yes, and remember", True, True), ("yes, this session", True, False),
     ("no", False, False), (None, False, False)],
    ids=["remember", "this session", "no", "declined"],
)  # fmt: skip
async def test_a_client_that_takes_forms_is_asked_once_with_what_the_folder_loads(
    env: dict[str, str], workdir: Path, plugins: dict[str, Path], tmp_path: Path,
    answer: str | None, loads: bool, kept: bool,
) -> None:  # fmt: skip
    token = "ghp_" + "a1B2" * 9
    server = {"command": "npx", "args": ["mcp-thing", "--api-key", token, f"--token={token}"]}
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {"planted": server}}))
    acp = await Acp.start(env, workdir, [answer], forms=True)
    acp.approve_all = True
    try:
        session = (await acp.new(workdir))["sessionId"]
        await acp.prompt(session, "!tool theirs {}")
        assert acp.asked == [] and len(acp.forms) == 1  # a form, never a permission
        message = acp.forms[0]["message"]
        assert f"Trust the plugins and rules in {workdir.resolve()}?" in message
        assert ".agents/plugins/spy.py" in message
        assert "planted: starts npx mcp-thing --api-key *** --token=***" in message
        title = acp.forms[0]["requestedSchema"]["title"]  # what a client draws alone
        assert title.startswith(f"Trust the plugins and rules in {workdir.resolve()}? It loads: ")
        assert "plugin (Python code that runs in the session): .agents/plugins/" in title
        assert "\n" not in title and len(title) <= 240 and token not in title
        assert token not in json.dumps(acp.wire.seen)
        choices = acp.forms[0]["requestedSchema"]["properties"]["answer"]["enum"]
        assert choices[0] == "no"  # a form filled with its first value trusts nothing
        assert ran(plugins) == loads
        assert acp.tools_run()[-1] == ("completed" if loads else "failed")
        assert trusted_file(env).exists() == kept
        await acp.prompt(session, "!echo again")
        assert len(acp.forms) == 1  # once
    finally:
        await acp.stop()


@pytest.mark.parametrize(
    "meta, loads",
    [
        ({"trusted": False}, False),
        ({"elelem": {"trusted": False}}, False),
        ({"trusted": True}, True),
        ({"elelem": {"trusted": True}}, True),
    ],
)
async def test_the_acp_face_honours_meta_trusted(
    env: dict[str, str], workdir: Path, plugins: dict[str, Path], meta: Any, loads: bool
) -> None:
    acp = await Acp.start(env, workdir, [])
    try:
        new = await acp.new(workdir, **meta)
        assert ran(plugins) == loads
        assert new["_meta"]["elelem"]["trust"]["trusted"] == loads
        await acp.prompt(new["sessionId"], "!echo hi")
        assert acp.asked == []  # the client said: nothing to ask
        assert not trusted_file(env).exists()  # the client's word is not kept
    finally:
        await acp.stop()


async def test_the_acp_face_asks_nothing_of_a_folder_with_nothing_to_trust(
    env: dict[str, str], workdir: Path
) -> None:
    acp = await Acp.start(env, workdir, [])
    try:
        session = (await acp.new(workdir))["sessionId"]
        await acp.prompt(session, "!echo hi")
        assert acp.asked == []
    finally:
        await acp.stop()


# -- the terminal ----------------------------------------------------------------------
QUESTION = "Trust the plugins and rules in {}? [y/N]"


@pytest.mark.parametrize("answer", ["y", "n"])
async def test_the_terminal_asks_once_before_anything_loads(
    env: dict[str, str], workdir: Path, plugins: dict[str, Path], answer: str
) -> None:
    token = "ghp_" + "q7W" * 10
    server = {"command": "uvx", "args": ["mcp-thing", f"--token={token}"]}
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {"planted": server}}))
    chat = await Terminal.spawn(["chat", "--provider", "stub", "--no-save"], env, workdir)
    try:
        shown = await chat.expect(QUESTION.format(workdir.resolve()))
        assert not ran(plugins)  # asked before a line of it runs
        listed = shown[: shown.index("Trust the plugins")]  # what it would load, first
        assert "plugin (Python code that runs in the session): .agents/plugins/spy.py" in listed
        assert "MCP server (.mcp.json) planted: starts uvx mcp-thing --token=***" in listed
        assert token not in shown
        chat.type(f"{answer}\r")
        screen = await chat.prompt()
        assert ran(plugins) == (answer == "y")
        if answer == "n":
            skipped = ".agents/plugins, .mcp.json"
            assert f"{workdir.resolve()} is not trusted: not loaded: {skipped}" in screen
        chat.type("/exit\r")
        assert await chat.wait() == 0
    finally:
        await chat.close()
    assert trusted_file(env).exists() == (answer == "y")
    if answer == "y":  # kept: the next run does not ask
        again = await Terminal.spawn(["chat", "--provider", "stub", "--no-save"], env, workdir)
        try:
            screen = await again.prompt()
            assert "Trust the plugins" not in screen
        finally:
            await again.close()


async def test_the_terminal_trusts_later_with_slash_trust(
    env: dict[str, str], workdir: Path, plugins: dict[str, Path]
) -> None:
    chat = await Terminal.spawn(["chat", "--provider", "stub", "--no-save"], env, workdir)
    try:
        await chat.expect(QUESTION.format(workdir.resolve()))
        chat.type("n\r")
        await chat.prompt()
        assert not ran(plugins)
        chat.type("/trust\r")
        screen = await chat.prompt()
        assert ran(plugins) and f"trusted {workdir.resolve()}" in screen
        assert trusted_file(env).read_text() == f"{workdir.resolve()}\n"
        chat.type("/exit\r")
        assert await chat.wait() == 0
    finally:
        await chat.close()


@pytest.mark.parametrize(
    "args", [["ask"], ["ask", "--no-project-plugins"], ["chat", "--no-project-plugins"]]
)
async def test_the_terminal_without_a_question_loads_nothing_of_an_untrusted_folder(
    env: dict[str, str], workdir: Path, plugins: dict[str, Path], args: list[str]
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", *args, "-p", "stub", "--no-save",
        *(["!echo hi"] if args[0] == "ask" else []),
        env=env, cwd=str(workdir), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await within(process.communicate(b"" if args[0] == "ask" else b"/exit\n"), 30)
    assert process.returncode == 0, stderr
    assert not ran(plugins)
    assert b"Trust the plugins" not in stdout + stderr  # no terminal to ask on, or opted out
    if args == ["ask"]:
        assert stdout.strip() == b"hi"
        assert b"is not trusted: not loaded: .agents/plugins" in stderr


async def test_the_terminal_asks_nothing_of_a_folder_with_nothing_to_trust(
    env: dict[str, str], workdir: Path
) -> None:
    chat = await Terminal.spawn(["chat", "--provider", "stub", "--no-save"], env, workdir)
    try:
        screen = await chat.prompt()
        assert "Trust the plugins" not in screen
    finally:
        await chat.close()


# -- MCP servers and the trusted-folders file itself ------------------------------------
async def test_an_untrusted_folders_mcp_servers_do_not_start_until_it_is_trusted(
    client: Any, workdir: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    server = {"command": "sh", "args": ["-c", f"touch {marker}; sleep 60"]}
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {"planted": server}}))
    new = await within(client.new_session(cwd=str(workdir)))
    assert new["trust"]["skipped"] == [str(workdir.resolve() / ".mcp.json")]
    assert new["trust"]["loads"] == [
        f"MCP server (.mcp.json) planted: starts sh -c touch {marker}; sleep 60"
    ]
    said = await within(client.command(new["sessionId"], "/mcp"))
    assert "No MCP servers" in json.dumps(said)
    await within(client.turn(new["sessionId"], "!echo settled"))
    assert not marker.exists()
    await within(client.trust(new["sessionId"]))  # now it loads: the check above can fail
    await within(until(marker.exists), 30)
    await within(client.close_session(new["sessionId"]))


async def test_what_a_folder_would_load_is_listed_bounded_and_masked(
    client: Any, workdir: Path
) -> None:
    """Hostile names are shown, not obeyed; a secret in a server's args is masked; a
    `${VAR}` is not expanded (the user's environment stays out); the list is bounded."""
    token = "sk-" + "Zx9" * 12
    servers = {
        "a": {"command": "npx", "args": ["srv", "--api-key", token, f"--token={token}", token]},
        "b": {"command": "run", "args": ["${HOME}", "postgres://me:hunter2@db/x"]},
        "c": {"type": "http", "url": "https://me:pw@example.test/mcp"},
    }
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    plugin(workdir, "evil\x1b[2J\nname", "x = 1\n")
    for n in range(60):
        plugin(workdir, f"p{n:02}", "x = 1\n")
    loads = (await within(client.new_session(cwd=str(workdir))))["trust"]["loads"]
    assert len(loads) == 41 and loads[-1] == "and 24 more"  # 61 plugins, 3 servers
    assert "\\x1b[2J\\nname.py" in loads[0]
    assert not any("\x1b" in line or "\n" in line for line in loads)
    plugin(workdir, "evil\x1b[2J\nname", "x = 1\n").unlink()
    for n in range(60):
        (workdir / ".agents" / "plugins" / f"p{n:02}.py").unlink()
    plugin(workdir, "one", "x = 1\n")
    (workdir / ".agents" / "skills" / "deploy").mkdir(parents=True)
    (workdir / ".agents" / "skills" / "deploy" / "SKILL.md").write_text("---\nname: deploy\n---\n")
    loads = (await within(client.new_session(cwd=str(workdir))))["trust"]["loads"]
    assert loads[1:] == [
        "skill (.agents/skills, instructions the model follows): deploy",
        "MCP server (.mcp.json) a: starts npx srv --api-key *** --token=*** ***",
        "MCP server (.mcp.json) b: starts run ${HOME} postgres://me:***@db/x",
        "MCP server (.mcp.json) c: connects to https://me:***@example.test/mcp",
    ]


@pytest.mark.parametrize("plant", ["symlink", "hard link"])
async def test_a_trusted_folders_file_planted_as_a_link_trusts_nothing(
    client: Any, env: dict[str, str], workdir: Path, plugins: dict[str, Path], tmp_path: Path,
    plant: str,
) -> None:  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(f"{workdir.resolve()}\n")
    if plant == "symlink":
        trusted_file(env).symlink_to(elsewhere)
    else:
        trusted_file(env).hardlink_to(elsewhere)
    result = await within(client.new_session(cwd=str(workdir)))
    assert result["trust"]["trusted"] is False and not ran(plugins)
    with pytest.raises(RpcError) as error:  # nor is it appended to through the link
        await within(client.trust(result["sessionId"]))
    assert error.value.kind == "trust_not_kept", error.value
    assert "is a symlink or not a regular file" in str(error.value) or "hard links" in str(
        error.value
    )
    assert not ran(plugins)
    assert elsewhere.read_text() == f"{workdir.resolve()}\n"
