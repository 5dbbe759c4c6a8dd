"""The plugin example in docs/plugins.md works exactly as written."""

import re
from pathlib import Path

from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

DOC = Path(__file__).parent.parent / "docs" / "plugins.md"


def example() -> str:
    return re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)


async def test_the_plugins_md_example(tmp_path, isolated_home):
    folder = tmp_path / ".agents" / "plugins"
    folder.mkdir(parents=True)
    (folder / "hello.py").write_text(example())
    rules = isolated_home / ".config" / "elelem" / "permissions"  # see the doc's note
    rules.parent.mkdir(parents=True)
    rules.write_text("execute allow\n")
    (tmp_path / "notes.txt").write_text("one two three")
    session = start(core_registry(entry_points=False), "parrot", "ara", cwd=tmp_path)

    assert session.toolbox.resolve("wc").kind == "read"
    assert (await session.toolbox.run("wc", {"path": "notes.txt"})).to_dict() == {
        "path": "notes.txt",
        "words": 3,
        "ok": True,
    }
    refused = await session.toolbox.run("execute", {"command": "sudo ls"})
    assert refused.to_dict() == {
        "error": "Permission denied: execute",
        "name": "execute",
        "args": {"command": "sudo ls"},
        "ok": False,
    }
    assert (await session.command("/calls")).output == "1 tool calls"
    assert session.conversation[0]["content"] == "Answer in one sentence when you can."
    assert (await session.turn("hi")).reply == "ara: hi"


async def test_the_plugins_md_mode_and_plan_example(tmp_path, isolated_home):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    folder = tmp_path / ".agents" / "plugins"
    folder.mkdir(parents=True)
    (folder / "docs_mode.py").write_text(blocks[1])
    session = start(core_registry(entry_points=False), cwd=tmp_path, project=True)
    seen = []
    session.plan.listeners.append(seen.append)
    assert (await session.command("/mode docs")).output == "  → mode: docs"
    assert "docs mode" in session.context[0]["content"]
    refused = await session.toolbox.run("execute", {"command": "true"})
    assert "execute is not allowed in docs mode" in refused.to_dict()["error"]
    shown = await session.toolbox.run("checklist", {"pages": ["README.md"]})
    assert shown.to_dict() == {"pages": 1, "ok": True}
    assert seen == [[{"content": "README.md", "status": "pending"}]]


def test_the_readme_layout_is_the_tree():
    readme = (DOC.parents[1] / "README.md").read_text()
    block = re.search(r"## Layout\n\n```\n(.*?)```", readme, re.S).group(1)
    named = []
    for line in block.splitlines():
        if line.startswith("   "):
            continue  # a description's second line
        for folder in re.findall(r"(?:^|\s{2,})(\S+/)(?=\s)", line):
            named.append(f"elelem_daemon/{folder}" if line.startswith("  ") else folder)
    root = DOC.parents[1]
    assert [f for f in named if not (root / f).is_dir()] == []
    packages = {
        f"{p.parent.relative_to(root)}/" for p in (root / "elelem_daemon").glob("*/**/__init__.py")
    }
    assert packages - set(named) == {"elelem_daemon/faces/"}  # named through its four faces
