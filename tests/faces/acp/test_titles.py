"""A tool call's title names its subject, for every built-in tool (issue 38: the `skill`
call was titled just `skill`), so clients that draw `Kind: title` show what runs."""

from __future__ import annotations

from pathlib import Path

from elelem_daemon.faces.acp.updates import tool_title
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

CWD = Path("/work/project")
TITLES = {  # each built-in tool, with telling arguments, and its title
    "read": ({"path": "/work/project/a.py"}, "Read `a.py`"),
    "write": ({"path": "b.txt", "content": "x"}, "Write `b.txt`"),
    "edit": ({"path": "src/c.py", "old": "1", "new": "2"}, "Edit `src/c.py`"),
    "execute": ({"command": "make test\nmore"}, "`make test`"),
    "list": ({}, "List `.`"),
    "glob": ({"pattern": "**/*.py"}, "Find `**/*.py`"),
    "grep": ({"pattern": "TODO", "path": "src"}, "Search `TODO` in `src`"),
    "interview": ({"question": "Which colour?"}, "Which colour?"),
    "task": ({"prompt": "Count the files\nthen report"}, "Task: Count the files"),
    "todo": ({"todos": [{"content": "a", "status": "pending"}] * 3}, "Update plan: 3 tasks"),
    "skill": ({"name": "review-pr"}, "Skill: review-pr"),
    "resource": ({"server": "docs", "uri": "file:///a.md"}, "Resource: docs `file:///a.md`"),
}


def test_every_built_in_tool_has_a_title_naming_its_subject(tmp_path: Path) -> None:
    session = start(core_registry(), "stub", None, tmp_path, plugin_files=False)
    built_in = set(session.toolbox.names()) | {"skill", "resource"}  # skills, MCP resources
    assert built_in <= set(TITLES), built_in - set(TITLES)
    for name, (arguments, title) in TITLES.items():
        assert tool_title(name, arguments, CWD) == title, name


def test_titles_of_the_other_forms() -> None:
    assert tool_title("skill", {"name": "review-pr", "file": "notes.md"}) == (
        "Skill: review-pr `notes.md`"
    )
    assert tool_title("skill", {"name": "a\nb"}) == "Skill: a"  # one line
    assert tool_title("todo", {"todos": [{}]}) == "Update plan: 1 task"
    assert tool_title("resource", {"server": "docs"}) == "List resources: docs"
    assert tool_title("demo__add", {"query": "x"}) == "demo__add `x`"  # an MCP server's tool
    assert tool_title("skill", {}) == "skill"  # nothing telling: its name
