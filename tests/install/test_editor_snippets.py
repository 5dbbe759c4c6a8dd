"""docs/editors.md: every editor's snippet starts the command the tests start.

acpx, codecompanion and avante are replayed against the real daemon (tests/acp_sdk);
Zed, JetBrains and agent-shell cannot run here, so their snippets are held to the same
command and arguments, and the JSON ones must parse."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

DOC = (Path(__file__).resolve().parents[2] / "docs" / "editors.md").read_text()
ACP = ["elelem", "daemon", "--acp"]
UVX = ["uvx", "elelem-daemon", "daemon", "--acp"]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, re.S)


def test_the_json_snippets_parse_and_start_the_acp_face() -> None:
    commands = []
    for block in blocks("json"):
        data = json.loads(block)
        servers = data.get("agent_servers")
        for entry in servers.values() if servers else [data]:
            commands.append([entry["command"], *entry["args"]])
    assert commands.count(ACP) == 2  # Zed and JetBrains
    assert UVX in commands


def test_the_lua_snippets_start_the_acp_face() -> None:
    lua = blocks("lua")
    assert len(lua) == 2  # codecompanion, avante
    assert '{ "elelem", "daemon", "--acp" }' in lua[0]
    assert 'command = "elelem"' in lua[1] and 'args = { "daemon", "--acp" }' in lua[1]


def test_the_agent_shell_snippet_starts_the_acp_face() -> None:
    (elisp,) = blocks("elisp")
    assert ':command "elelem"' in elisp and """:command-params '("daemon" "--acp")""" in elisp


def test_the_acpx_lines_start_the_acp_face() -> None:
    lines = [
        line for block in blocks("sh") for line in block.splitlines() if line.startswith("acpx")
    ]
    assert lines
    for line in lines:
        words = shlex.split(line.split("#")[0])
        assert shlex.split(words[words.index("--agent") + 1]) == ACP
