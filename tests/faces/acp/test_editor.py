"""The ACP face's Output: a tool call's kind is the tool's own, asked of the toolbox."""

from __future__ import annotations

from typing import Any

from elelem_daemon.faces.acp.editor import AcpOutput
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start


class Sent:
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.updates.append(params["update"])


def test_a_tool_call_carries_the_tools_kind(tmp_path):
    registry = core_registry(entry_points=False).child()
    registry.plugin("web").tool("web_search", "Search the web", kind="fetch")(lambda s, a: {})
    sent = Sent()
    output = AcpOutput(sent)  # type: ignore[arg-type]
    output.say("before the session: dropped")
    session = start(registry, cwd=tmp_path, plugin_files=False, output=output)
    output.attach(session)
    for name in ("web_search", "grep", "nope?"):
        output.doing({"id": name, "name": name, "arguments": {}})
    assert [(u["title"], u["kind"]) for u in sent.updates] == [
        ("web_search", "fetch"),
        ("grep", "search"),
        ("nope?", "other"),
    ]
