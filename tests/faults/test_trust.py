"""Trust: a session reports which plugins it loaded and where each came from, and an
untrusted workspace loads none of the project's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import plugin, within

pytestmark = pytest.mark.e2e

TOOL = """
def register(plugin):
    @plugin.tool("{name}", "a {name} tool", {{}})
    def run(args):
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


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in result["plugins"]}


async def test_a_trusted_session_reports_every_plugin_and_its_origin(
    client: Any, workdir: Path, plugins: dict[str, Path]
) -> None:
    result = await within(client.new_session(cwd=str(workdir)))
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
    assert found["broken"]["source"] == "project"
    assert found["broken"]["error"] == "ValueError: nope"
    assert {"mine", "theirs"} <= {t["name"] for t in result["tools"]}
    sources = [p["source"] for p in result["plugins"]]
    assert sources == sorted(sources, key=["builtin", "entry-point", "user", "project"].index)


async def test_an_untrusted_session_loads_and_reports_no_project_plugin(
    client: Any, workdir: Path, plugins: dict[str, Path]
) -> None:
    result = await within(client.new_session(cwd=str(workdir), trusted=False))
    assert "project" not in {p["source"] for p in result["plugins"]}
    assert {"mine", "shell"} <= set(by_name(result))
    assert "theirs" not in {t["name"] for t in result["tools"]}
    assert not plugins["spy"].with_suffix(".ran").exists()  # not one line of it ran
    trusted = await within(client.new_session(cwd=str(workdir), trusted=True))
    assert "theirs" in by_name(trusted)
    assert plugins["spy"].with_suffix(".ran").exists()


async def test_a_client_that_says_nothing_gets_the_product_behaviour(
    client: Any, workdir: Path, plugins: dict[str, Path]
) -> None:
    result = await within(client.new_session(cwd=str(workdir)))
    assert by_name(result)["theirs"]["source"] == "project"


async def test_trusted_must_be_a_boolean(client: Any, workdir: Path) -> None:
    from elelem_daemon.jsonrpc.client import RpcError

    with pytest.raises(RpcError) as error:
        await within(client.new_session(cwd=str(workdir), trusted="yes"))
    assert error.value.kind == "invalid_params"


@pytest.mark.parametrize("flag", [[], ["--no-project-plugins"]])
async def test_the_terminal_opts_out_with_no_project_plugins(
    env: dict[str, str], workdir: Path, plugins: dict[str, Path], flag: list[str]
) -> None:
    import asyncio
    import sys

    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "elelem_daemon",
        "ask",
        "-p",
        "stub",
        *flag,
        "!echo hi",
        env=env,
        cwd=str(workdir),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await within(process.communicate(), 30)
    assert (process.returncode, stdout.strip()) == (0, b"hi"), stderr
    trusted = not flag
    assert plugins["spy"].with_suffix(".ran").exists() == trusted
    assert (b"broken" in stderr) == trusted  # a broken project plugin is warned about


@pytest.mark.parametrize("trusted", [True, False])
async def test_project_permission_files_apply_only_to_a_trusted_workspace(
    client: Any, workdir: Path, trusted: bool
) -> None:
    """The user's file allows `execute` (the e2e env); the project's denies it."""
    (workdir / ".agents").mkdir(exist_ok=True)
    (workdir / ".agents" / "permissions").write_text("execute deny\n")
    session = (await within(client.new_session(cwd=str(workdir), trusted=trusted)))["sessionId"]
    events: list[dict[str, Any]] = []
    call = '!tool execute {"command": "echo ran"}'
    await within(client.turn(session, call, on_event=events.append))
    (result,) = [e["params"]["result"] for e in events if e["method"] == "event/result"]
    if trusted:
        assert result["error"] == "Permission denied: execute"
    else:
        assert result["content"] == "ran\n"


async def test_a_loaded_session_reports_its_plugins_and_keeps_to_its_trust(
    client: Any, workdir: Path, plugins: dict[str, Path]
) -> None:
    session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
    await within(client.turn(session, "!echo kept"))
    await within(client.close_session(session))
    plugins["spy"].with_suffix(".ran").unlink()
    loaded = await within(client.request("session/load", {"sessionId": session, "trusted": False}))
    assert "project" not in {p["source"] for p in loaded["plugins"]}
    assert "shell" in by_name(loaded)
    assert not plugins["spy"].with_suffix(".ran").exists()
