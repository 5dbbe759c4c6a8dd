"""The real npm server of docs/mcp.md's example, `@modelcontextprotocol/server-filesystem`
(pinned in filesystem/package.json), installed by this test with `npm ci` into
tests/mcp/filesystem/node_modules (kept there as a cache), driven through a session."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp_support import (  # noqa: F401 (fixtures)
    allow_mcp,
    marks,
    project,
    quick_retries,
    sessions,
    status_of,
)

HERE = Path(__file__).parent / "filesystem"
DOC = Path(__file__).parents[2] / "docs" / "mcp.md"
BIN = HERE / "node_modules" / ".bin" / "mcp-server-filesystem"


@pytest.fixture(scope="module")
def filesystem_server() -> Path:
    if not BIN.exists():
        npm = shutil.which("npm")
        assert npm, "npm is needed (bin/setup's machine has node and npm)"
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=HERE,
            check=True,
            timeout=600,
        )
    return BIN


async def test_the_filesystem_server(sessions, project: Path, filesystem_server: Path) -> None:
    allow_mcp()
    shared = project / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("remember the milk\n")
    servers = {"files": {"command": str(filesystem_server), "args": [str(shared)]}}
    session = await sessions(project, servers)
    status = status_of(session, "files")
    assert status["state"] == "ready", status
    assert {"files__read_text_file", "files__list_directory", "files__write_file"} <= set(
        status["tools"]
    )
    listed = await session.toolbox.run("files__list_directory", {"path": str(shared)})
    assert "notes.txt" in listed.payload["content"]
    read = await session.toolbox.run("files__read_text_file", {"path": str(shared / "notes.txt")})
    assert "remember the milk" in read.payload["content"]
    outside = await session.toolbox.run("files__read_text_file", {"path": "/etc/hostname"})
    assert not outside.ok and "outside allowed directories" in outside.error.lower()
    wrong = await session.toolbox.run("files__read_text_file", {})
    assert wrong.error == "object at root is missing required properties: path"


async def test_the_docs_example_as_written(
    sessions, project: Path, filesystem_server: Path
) -> None:
    """docs/mcp.md's first example, with its folder made this test's; `npx` runs the
    package installed above (cwd: its folder), so nothing is fetched."""
    allow_mcp()
    example = json.loads(re.search(r"```json\n(.*?)```", DOC.read_text(), re.S).group(1))
    files = example["mcpServers"]["files"]
    assert files == {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"],
    }
    notes = project / "notes"
    notes.mkdir()
    (notes / "todo.md").write_text("- write docs\n")
    files["args"][-1] = str(notes)
    files["cwd"] = str(HERE)
    session = await sessions(project, {"files": files})
    assert status_of(session, "files")["state"] == "ready", status_of(session, "files")
    read = await session.toolbox.run("files__read_text_file", {"path": str(notes / "todo.md")})
    assert "write docs" in read.payload["content"]
