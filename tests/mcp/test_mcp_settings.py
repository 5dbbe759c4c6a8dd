"""The MCP settings (ELELEM_MCP_*, docs/mcp.md) are read as every numeric setting is
(`config.number`): a value that is not a number, or is below the setting's minimum,
keeps the default and a notice on stderr names it (once for that value), never
silently; a good value is used and says nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_support import (  # noqa: F401 (fixtures)
    allow_mcp,
    project,
    quick_retries,
    sessions,
    stdio,
)

from elelem_daemon.mcp.server import setting

SETTINGS = [  # name, default, the smallest value taken
    ("ELELEM_MCP_TIMEOUT", 30.0, "0.1"),
    ("ELELEM_MCP_TOOL_TIMEOUT", 600.0, "0.1"),
    ("ELELEM_MCP_AUTH_TIMEOUT", 300.0, "0.1"),
    ("ELELEM_MCP_RETRIES", 5.0, "1"),
    ("ELELEM_MCP_BACKOFF", 1.0, "0.01"),
]


@pytest.mark.parametrize(("name", "default", "least"), SETTINGS)
@pytest.mark.parametrize("raw", ["soon", "0", "-3", "nan", "inf"])
def test_a_bad_value_keeps_the_default_and_says_so(
    name: str, default: float, least: str, raw: str, monkeypatch, capsys
) -> None:
    monkeypatch.setenv(name, raw)
    assert setting(name, default) == default
    assert setting(name, default) == default  # read again: said once
    err = capsys.readouterr().err
    assert err == f"elelem: {name}={raw!r} is not a number >= {least}; using {default:g}\n"


@pytest.mark.parametrize(("name", "default", "least"), SETTINGS)
def test_a_good_value_is_used_and_says_nothing(
    name: str, default: float, least: str, monkeypatch, capsys
) -> None:
    monkeypatch.setenv(name, least)
    assert setting(name, default) == float(least)
    monkeypatch.setenv(name, " 7 ")
    assert setting(name, default) == 7.0
    monkeypatch.delenv(name)
    assert setting(name, default) == default
    assert capsys.readouterr().err == ""


async def test_a_bad_tool_timeout_is_named_and_the_server_still_serves(
    sessions, project: Path, monkeypatch, capsys
) -> None:
    """A real stdio server: its call runs under the default bound, and the user reads
    why the setting was not taken."""
    monkeypatch.setenv("ELELEM_MCP_TOOL_TIMEOUT", "ten minutes")
    allow_mcp()
    session = await sessions(project, {"demo": stdio()})
    result = await session.toolbox.run("demo__add", {"a": 2, "b": 2})
    assert result.payload["content"] == "4"
    assert (
        "elelem: ELELEM_MCP_TOOL_TIMEOUT='ten minutes' is not a number >= 0.1; using 600"
        in capsys.readouterr().err
    )


def test_elelem_ask_names_a_bad_start_up_timeout_once_and_still_uses_its_server(
    tmp_path: Path, project: Path
) -> None:
    """`elelem ask` waits for its servers as long as they may take to start (the same
    setting, read the same way): one notice, the default bound, and the server's tool."""
    home = tmp_path / "home"
    config = home / ".config" / "elelem"
    config.mkdir(parents=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": stdio()}}))
    (config / "permissions").write_text("demo__* allow\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        ELELEM_MCP_TIMEOUT="a minute",
    )
    run = subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "ask", "-p", "stub",
         '!tool demo__add {"a": 2, "b": 40}'],
        cwd=project, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    notice = "elelem: ELELEM_MCP_TIMEOUT='a minute' is not a number >= 0.1; using 30\n"
    assert notice in run.stderr and run.stderr.count("ELELEM_MCP_TIMEOUT=") == 1, run.stderr
    assert "42" in run.stdout + run.stderr and "done." in run.stdout
