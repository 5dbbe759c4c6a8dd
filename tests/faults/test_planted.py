"""Code that runs later is never planted unseen (issue 36). With an approve-all client a
command the model runs can write `~/.agents/plugins/planted.py`; a detached child can
write it after the command ended. So the user's own files that decide what runs are
checked when they load, against what the user last approved (safety/vetted.py): a
new or changed one is held, in `elelem ask`, the terminal, the daemon and the ACP
face, until the user confirms it; the first run approves what is already there."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.async_pty import Terminal

from .conftest import plugin, within
from .test_trust import Acp, _last_commands, trusted_file

pytestmark = pytest.mark.e2e

PLANTED = """
from pathlib import Path

Path(__file__).with_suffix(".ran").touch()  # the moment the file is loaded


def register(plugin):
    @plugin.tool("planted", "a planted tool", {})
    def run(session, args):
        return "planted"

    @plugin.command("planted", "a planted command")
    def planted(session, args):
        session.output.say("planted ran")
"""
APPROVE = "elelem trust --user-files"


def home(env: dict[str, str]) -> Path:
    return Path(env["HOME"])


def marker(env: dict[str, str]) -> Path:
    return home(env) / ".agents" / "plugins" / "planted.ran"


def plant(env: dict[str, str], extra: str = "") -> Path:
    return plugin(home(env), "planted", PLANTED + extra)


async def elelem(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str, str]:
    """`elelem ARGS` with no terminal (stdin /dev/null): its exit code, stdout, stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", *args, env=env, cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await within(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def ask(env: dict[str, str], cwd: Path, prompt: str = "hi") -> tuple[int, str, str]:
    return await elelem(env, cwd, "ask", "--provider", "stub", "--no-save", prompt)


async def confirm_in_a_terminal(env: dict[str, str], cwd: Path, answer: str = "y") -> str:
    """`elelem trust --user-files` on a terminal, answered `answer`: what it showed."""
    term = await Terminal.spawn(["trust", "--user-files"], env, cwd)
    try:
        await term.expect("Load them? [y/N]")
        term.type(answer + "\r")
        await term.wait()
        return term.plain()
    finally:
        await term.close()


# -- elelem ask ----------------------------------------------------------------------
async def test_a_plugin_planted_after_the_first_run_does_not_run_in_elelem_ask(
    env: dict[str, str], workdir: Path
) -> None:
    code, _, first = await ask(env, workdir)  # the first run: records what is there
    assert code == 0 and "recorded 1 of your files" in first  # the permissions
    path = plant(env)
    code, out, err = await ask(env, workdir, "!tool planted {}")
    assert not marker(env).exists()  # not one line of it ran
    assert "unknown tool" in (out + err) and "planted" in err
    held = [line for line in err.splitlines() if "held, not loaded" in line]
    assert held == [
        f"elelem: held, not loaded (new or changed since you approved them): new plugin: "
        f"{path} ({path.stat().st_size} bytes); run `{APPROVE}` in a terminal to load them"
    ]
    # no terminal: the command lists it and refuses to confirm (a command the agent
    # runs has none), so it is still held
    code, _, err = await elelem(env, workdir, "trust", "--user-files")
    assert code == 1 and f"new plugin: {path}" in err and "run this in a terminal" in err
    await ask(env, workdir)
    assert not marker(env).exists()


async def test_confirmed_it_loads_and_changed_it_is_held_again(
    env: dict[str, str], workdir: Path
) -> None:
    await ask(env, workdir)
    path = plant(env)
    shown = await confirm_in_a_terminal(env, workdir, "n")  # a no keeps it held
    assert f"new plugin: {path}" in shown
    await ask(env, workdir)
    assert not marker(env).exists()
    await confirm_in_a_terminal(env, workdir)
    code, out, _ = await ask(env, workdir, "!tool planted {}")
    assert code == 0 and marker(env).exists()  # loaded, and its tool ran
    marker(env).unlink()
    plant(env, "# one more line\n")  # changed since approved
    _, _, err = await ask(env, workdir)
    assert not marker(env).exists()
    assert f"changed plugin: {path}" in err and APPROVE in err


async def test_the_first_run_approves_what_is_already_there(
    env: dict[str, str], workdir: Path
) -> None:
    plant(env)  # before elelem ever ran with this change: the user's own
    code, _, err = await ask(env, workdir)
    assert code == 0 and marker(env).exists()
    assert "recorded 2 of your files" in err  # the plugin and the permissions file
    marker(env).unlink()
    _, _, err = await ask(env, workdir)  # unchanged: loads, nothing said
    assert marker(env).exists() and "held" not in err and "recorded" not in err


async def test_a_record_planted_as_a_link_approves_nothing(
    env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    """Not a first run: a record that is not elelem's own file holds everything."""
    await ask(env, workdir)
    record = home(env) / ".local" / "state" / "elelem" / "vetted.json"
    fake = tmp_path / "fake.json"
    fake.write_text(json.dumps({"files": {}, "trusted": []}))
    record.unlink()
    record.symlink_to(fake)
    plant(env)
    _, _, err = await ask(env, workdir)
    assert not marker(env).exists() and "held, not loaded" in err


async def test_a_hand_written_trusted_folder_is_held(env: dict[str, str], workdir: Path) -> None:
    """The same approve-all path appends to the trusted-folders file: an entry elelem
    did not write trusts nothing until the user confirms it."""
    await ask(env, workdir)
    spy = plugin(workdir, "spy", 'open(__file__ + ".ran", "w").close()\n')
    trusted_file(env).write_text(f"{workdir.resolve()}\n")
    _, _, err = await ask(env, workdir)
    assert not Path(f"{spy}.ran").exists()
    assert f"changed trusted folders: {trusted_file(env)}" in err and str(workdir) in err
    await confirm_in_a_terminal(env, workdir)
    await ask(env, workdir)
    assert Path(f"{spy}.ran").exists()


@pytest.mark.parametrize("answer", ["y", "n"])
async def test_the_terminal_asks_before_it_loads_and_trust_files_loads_it_later(
    env: dict[str, str], workdir: Path, answer: str
) -> None:
    await ask(env, workdir)
    path = plant(env)
    chat = await Terminal.spawn(["chat", "--provider", "stub", "--no-save"], env, workdir)
    try:
        shown = await chat.expect("Load them? [y/N]")
        assert not marker(env).exists()  # asked before a line of it runs
        assert f"new plugin: {path} ({path.stat().st_size} bytes)" in shown
        chat.type(f"{answer}\r")
        await chat.prompt()
        assert marker(env).exists() is (answer == "y")
        if answer == "n":
            chat.type("/trust files\r")  # the user's own word, later
            await chat.expect("loaded:")
            assert marker(env).exists()
        chat.type("/planted\r")
        await chat.expect("planted ran")
        chat.type("/exit\r")
        assert await chat.wait() == 0
    finally:
        await chat.close()


# -- the daemon ----------------------------------------------------------------------
async def test_the_daemon_holds_it_and_asks_a_trust_question(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    asked: list[dict[str, Any]] = []
    answers = ["allow", "hold", "load"]  # an approver's word, the first option, then yes

    def on_ask(params: dict[str, Any]) -> str | None:
        asked.append(params)
        return answers.pop(0)

    client = await spawn(on_ask=on_ask)
    await within(client.initialize())
    await within(client.new_session(cwd=str(workdir)))  # the first run
    path = plant(env)
    for answer in ("allow", "hold"):
        new = await within(client.new_session(cwd=str(workdir)))
        assert "planted" not in {c["name"] for c in new["commands"]}
        assert "planted" not in {p["name"] for p in new["plugins"]}
        assert new["held"] == [
            {"path": str(path), "change": "new", "size": path.stat().st_size, "kind": "plugin"}
        ]
        await within(client.turn(new["sessionId"], "!tool planted {}"))
        assert not marker(env).exists()
        question = asked[-1]
        assert question["kind"] == "trust" and question["options"] == ["hold", "load"]
        assert question["files"] == new["held"] and question["turnId"] is None
        assert f"new plugin: {path}" in question["prompt"]
        assert answer not in answers  # this answer was the one given
    new = await within(client.new_session(cwd=str(workdir)))
    events: list[Any] = []
    await within(client.turn(new["sessionId"], "!tool planted {}", on_event=events.append))
    assert marker(env).exists()  # `load`: approved, and the tool ran
    ok = [e["params"]["ok"] for e in events if e["method"] == "event/result"]
    assert ok == [True]
    again = await within(client.new_session(cwd=str(workdir)))
    assert "planted" in {c["name"] for c in again["commands"]} and "held" not in again
    assert len(asked) == 3  # approved: never asked again


async def test_a_daemon_client_that_takes_no_questions_loads_it_with_trust_files(
    client: Any, env: dict[str, str], workdir: Path
) -> None:
    await within(client.new_session(cwd=str(workdir)))
    plant(env)
    session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
    await within(client.turn(session, "!echo hi"))
    assert not marker(env).exists()
    said = await within(client.command(session, "/trust files"))  # typed by the user
    assert marker(env).exists() and "new plugin" in said["output"]
    assert "planted ran" in json.dumps(await within(client.command(session, "/planted")))


# -- the ACP face --------------------------------------------------------------------
async def test_acp_approve_all_plants_a_plugin_and_the_next_session_holds_it(
    env: dict[str, str], workdir: Path
) -> None:
    """The finding, whole: an approve-all client (avante's default) lets a command plant
    the plugin; the warning has one prefix; the next session neither runs nor
    advertises it, says once how to load it, and `/trust files` typed loads it."""
    acp = await Acp.start(env, workdir, [])
    acp.approve_all = True
    try:
        first = (await acp.new(workdir))["sessionId"]
        target = "~/.agents/plugins/planted.py"
        command = f"mkdir -p ~/.agents/plugins; cat > {target} <<'EOF'{PLANTED}EOF"
        await acp.prompt(first, f"!tool execute {json.dumps({'command': command})}")
        assert (home(env) / ".agents" / "plugins" / "planted.py").exists()
        said = acp.said(first)
        assert "error: execute: this command changed protected files" in said
        assert "warning:" not in said and said.count("error:") == 1
        new = await acp.new(workdir)
        session = new["sessionId"]
        assert new["_meta"]["elelem"]["held"][0]["change"] == "new"
        assert "planted" not in [c["name"] for c in _last_commands(acp)]
        await acp.prompt(session, "!echo hi")
        assert not marker(env).exists()
        assert acp.said(session).count("held, not loaded") == 1
        assert "type /trust files to load them" in acp.said(session)
        assert not any("planted" in json.dumps(a) for a in acp.asked)  # never a permission
        await acp.prompt(session, "!echo again")
        assert acp.said(session).count("held, not loaded") == 1  # once
        await acp.prompt(session, "/trust files")  # the user's own word
        assert marker(env).exists()
        assert "planted" in [c["name"] for c in _last_commands(acp)]
    finally:
        await acp.stop()


@pytest.mark.parametrize("answer", [None, "hold", "load"])
async def test_acp_asks_with_a_form_where_the_client_takes_them(
    env: dict[str, str], workdir: Path, answer: str | None
) -> None:
    acp = await Acp.start(env, workdir, [answer], forms=True)
    try:
        await acp.new(workdir)
        path = plant(env)
        session = (await acp.new(workdir))["sessionId"]
        await acp.prompt(session, "!echo hi")
        assert len(acp.forms) == 1 and acp.asked == []
        form = acp.forms[0]
        assert form["requestedSchema"]["properties"]["answer"]["enum"] == ["hold", "load"]
        assert f"new plugin: {path}" in form["message"]
        assert marker(env).exists() is (answer == "load")
        advertised = "planted" in [c["name"] for c in _last_commands(acp)]
        assert advertised is (answer == "load")
        if answer != "load":
            assert "type /trust files to load them" in acp.said(session)
    finally:
        await acp.stop()
