"""`/mcp`'s text names each ready server's tools (docs/mcp.md), a long list cut with
how to see the rest."""

from __future__ import annotations

from typing import Any

from elelem_daemon.mcp.status import text


def ready(name: str, tools: list[str]) -> dict[str, Any]:
    return {
        "name": name, "source": "user", "transport": "stdio", "state": "ready",
        "tools": tools, "prompts": [], "resources": False, "error": None,
        "authorizeUrl": None, "problems": [], "log": None, "attempts": 0, "retryAt": None,
        "target": "python server.py",
    }  # fmt: skip


def test_a_ready_server_s_line_names_its_tools() -> None:
    shown = text({"servers": [ready("files", ["files__read", "files__list"])], "problems": []})
    assert shown == "- **files** (user, stdio): ready, 2 tools: files__read, files__list"


def test_a_long_tool_list_is_cut_with_how_to_see_it_whole() -> None:
    tools = [f"db__t{i}" for i in range(30)]
    shown = text({"servers": [ready("db", tools)], "problems": []})
    assert shown.startswith("- **db** (user, stdio): ready, 30 tools: db__t0, db__t1,")
    assert shown.endswith("db__t7, … (+22: /mcp db)")
