"""Issue 29, the gap its trust work left: a write to a protected path (a plugin in
`~/.agents/plugins`, the trusted-folders file, the project's `.agents/permissions`)
decides what runs later, so over ACP it is never a `session/request_permission`, which
an "approve every permission" client (avante's default, `acpx --approve-all`) answers
for the user. A client that declares forms is asked with one; any other is refused:
the model reads why, and the chat says what was refused and how to do it. Every
message both ways is checked against the ACP 1.21 schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.acp_schema import Checker
from test_clients import AVANTE, by_kind, text

from clients import Client

pytestmark = pytest.mark.e2e

FORMS = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "elicitation": {"form": {}},
    },
    "clientInfo": {"name": "forms", "version": "1"},
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# Demo\n")
    return folder


def targets(home: Path, project: Path) -> list[tuple[str, Path]]:
    """(the path the model names, the file it would be): a plugin the next session
    runs, the trusted-folders file, the project's rules."""
    return [
        ("~/.agents/plugins/x.py", home / ".agents" / "plugins" / "x.py"),
        ("~/.config/elelem/trusted", home / ".config" / "elelem" / "trusted"),
        (".agents/permissions", project / ".agents" / "permissions"),
    ]


def write(path: str, content: str) -> str:
    return "!tool write " + json.dumps({"path": path, "content": content})


def files() -> dict[str, Any]:
    """The client's fs handlers, answering as the schema says."""

    def read(params: dict[str, Any]) -> dict[str, str]:
        path = Path(params["path"])
        return {"content": path.read_text() if path.exists() else ""}

    def write(params: dict[str, Any]) -> dict[str, Any]:
        Path(params["path"]).parent.mkdir(parents=True, exist_ok=True)
        Path(params["path"]).write_text(params["content"])
        return {}

    return {"fs/read_text_file": read, "fs/write_text_file": write}


async def start(home: Path, project: Path, init: dict[str, Any], answers: dict[str, Any]) -> Any:
    client = await Client.start(home, project, {**files(), **answers})
    client.checker = Checker()
    assert "result" in await client.request("initialize", init)
    new = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
    return client, new["result"]["sessionId"]


async def test_an_approve_all_client_writes_no_protected_path(home: Path, project: Path) -> None:
    """avante, approving every permission request at once, and a model that plants a
    plugin, trusts a folder, loosens the project's rules: nothing is written, no
    permission request is sent for them, the model reads why, the chat says so."""
    approve = {"session/request_permission": by_kind("allow_once")}
    client, sid = await start(home, project, AVANTE, approve)
    evil = "import os\nos.system('touch /tmp/owned')\n"
    for named, path in targets(home, project):
        mark = len(client.updates)
        asked = len(client.asked)
        run = write(named, evil if named.endswith(".py") else f"{project}\n")
        answer = await client.request("session/prompt", {"sessionId": sid, "prompt": text(run)})
        assert answer["result"]["stopReason"] == "end_turn"
        assert not path.exists(), named
        assert not [m for m in client.asked[asked:] if m["method"] != "fs/read_text_file"]
        (ended,) = [u for u in client.of("tool_call_update", mark) if u.get("status") == "failed"]
        error = ended["rawOutput"]["error"]
        assert "protected" in error and str(path) in error
        assert "write the file themselves" in error  # how the user can do it instead
        said = client.text(mark)
        assert "Refused" in said and str(path) in said and "forms" in said
    # an ordinary write still asks the client, which approves it
    mark = len(client.asked)
    ok = write("notes.txt", "fine\n")
    await client.request("session/prompt", {"sessionId": sid, "prompt": text(ok)})
    assert [m for m in client.asked[mark:] if m["method"] == "session/request_permission"] == []
    assert (project / "notes.txt").read_text() == "fine\n"  # inside the folder: no question
    outside = home / "outside.txt"
    await client.request(
        "session/prompt", {"sessionId": sid, "prompt": text(write(str(outside), "x\n"))}
    )
    assert [m for m in client.asked[mark:] if m["method"] == "session/request_permission"]
    assert outside.read_text() == "x\n"  # outside: asked, and approved
    assert await client.close() == 0


async def test_a_client_with_forms_is_asked_and_its_answer_decides(
    home: Path, project: Path
) -> None:
    """A client that declares `elicitation.form` and also approves every permission:
    the protected write is a form (never a permission request); `deny` writes nothing,
    `allow` writes the file. The form's first choice allows nothing."""
    forms: list[dict[str, Any]] = []
    replies = ["deny", "allow"]

    def form(params: dict[str, Any]) -> dict[str, Any]:
        forms.append(params)
        return {"action": "accept", "content": {"answer": replies.pop(0)}}

    answers = {"session/request_permission": by_kind("allow_once"), "elicitation/create": form}
    client, sid = await start(home, project, FORMS, answers)
    plugin = home / ".agents" / "plugins" / "x.py"
    run = write("~/.agents/plugins/x.py", "print('hi')\n")
    await client.request("session/prompt", {"sessionId": sid, "prompt": text(run)})
    assert not plugin.exists()
    (asked,) = forms
    assert str(plugin) in asked["message"] and "protected" in asked["message"]
    choices = asked["requestedSchema"]["properties"]["answer"]["enum"]
    assert choices[0] == "deny" and "always" not in choices
    await client.request("session/prompt", {"sessionId": sid, "prompt": text(run)})
    assert plugin.read_text() == "print('hi')\n"
    assert len(forms) == 2
    assert not [m for m in client.asked if m["method"] == "session/request_permission"]
    assert await client.close() == 0


async def test_a_form_declined_writes_nothing(home: Path, project: Path) -> None:
    """Declined or dismissed: no answer, nothing written, the model reads that."""

    def form(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    answers = {"session/request_permission": by_kind("allow_once"), "elicitation/create": form}
    client, sid = await start(home, project, FORMS, answers)
    mark = len(client.updates)
    run = write(".agents/permissions", "* allow\n")
    await client.request("session/prompt", {"sessionId": sid, "prompt": text(run)})
    assert not (project / ".agents" / "permissions").exists()
    (ended,) = [u for u in client.of("tool_call_update", mark) if u.get("status") == "failed"]
    assert "Permission denied: write" in ended["rawOutput"]["error"]
    assert await client.close() == 0
