"""The session's title (ACP's `session_info_update`): the first user message's first
line as the model holds it now; a summary's `Context: ` and Markdown heading left out."""

from __future__ import annotations

from pathlib import Path

from elelem_daemon.faces.acp.title import title, update
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start


def test_the_title_follows_the_conversation(tmp_path: Path) -> None:
    session = start(core_registry(), "stub", None, tmp_path, plugin_files=False)
    assert title(session) is None
    session.conversation.add("user", "\n  Fix the parser  \nand the lexer")
    session.conversation.add("assistant", "done")
    assert title(session) == "Fix the parser"
    session.conversation.clear()
    session.conversation.add("user", "Context: \n## Summary\n\nThe user fixed a parser.")
    assert title(session) == "Summary"
    session.conversation.clear()
    session.conversation.add("user", "x" * 500)
    assert len(title(session) or "") <= 80
    assert update(None)["title"] is None and update("a")["sessionUpdate"] == "session_info_update"
