"""Questions as codecompanion, avante and acpx draw them (issue 33): a question's
`session/request_permission` comes after a `tool_call` that announces it (else the
client draws "Other: Tool call" or `call_4`), and its title alone says what happens,
to which files, with which choices (codecompanion draws `Kind: title` and its own
Accept / Always accept / Reject buttons; avante the title as the description)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_clients import ACPX, AVANTE, CODECOMPANION, COLOURS, buffers, by_kind, text

from clients import Client

pytestmark = pytest.mark.e2e
CLIENTS = {"codecompanion": CODECOMPANION, "avante": AVANTE, "acpx": ACPX}
WRITE = '!tool write {"path":"made.txt","content":"x\\n"}'


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def announced_first(seen: list[dict[str, Any]]) -> None:
    """Every tool_call_update, and every permission request, is about a call a
    `tool_call` announced before it."""
    announced: set[str] = set()
    for message in seen:
        if message.get("method") == "session/update":
            update = message["params"]["update"]
            if update["sessionUpdate"] == "tool_call":
                announced.add(update["toolCallId"])
            elif update["sessionUpdate"] == "tool_call_update":
                assert update["toolCallId"] in announced, update
        elif message.get("method") == "session/request_permission":
            assert message["params"]["toolCall"]["toolCallId"] in announced, message


class Answers:
    """Permission answers by kind, in turn (what codecompanion's keys and avante's
    yes/all/no send)."""

    def __init__(self, *kinds: str) -> None:
        self.kinds = list(kinds)

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        return by_kind(self.kinds.pop(0))(params)


async def session(client: Client, project: Path, init: dict[str, Any]) -> str:
    await client.request("initialize", init)
    new = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
    return str(new["result"]["sessionId"])


@pytest.mark.parametrize("name", list(CLIENTS))
async def test_undo_names_the_files_it_would_delete_after_a_tool_call(
    home: Path, project: Path, name: str
) -> None:
    answers = Answers("reject_once", "allow_once")  # the write in the project asks none
    client = await Client.start(
        home, project, {**buffers(project), "session/request_permission": answers}
    )
    sid = await session(client, project, CLIENTS[name])
    await client.request("session/prompt", {"sessionId": sid, "prompt": text(WRITE)})
    assert (project / "made.txt").exists()
    for _ in range(2):  # no, then yes
        await client.request("session/prompt", {"sessionId": sid, "prompt": text("/undo")})
    asked = [m["params"] for m in client.asked if m["method"] == "session/request_permission"]
    assert len(asked) == 2
    undo = asked[0]["toolCall"]
    assert undo["title"] == "Rewind to before turn 1: delete `made.txt`"
    assert undo["kind"] == "edit"  # codecompanion: "Edit: Rewind to before turn 1: ..."
    assert undo["locations"] == [{"path": str(project / "made.txt")}]
    assert [(o["name"], o["kind"]) for o in asked[0]["options"]] == [
        ("Yes", "allow_once"),
        ("No", "reject_once"),
    ]
    assert not (project / "made.txt").exists()
    announced_first(client.seen)
    shown = [
        u for u in client.updates if u.get("toolCallId") == undo["toolCallId"]
    ]  # the announcement, then its end (declined: failed)
    assert [(u["sessionUpdate"], u.get("status")) for u in shown] == [
        ("tool_call", "pending"),
        ("tool_call_update", "failed"),
    ]
    assert shown[0]["title"] == undo["title"]
    await client.close()


@pytest.mark.parametrize("name", list(CLIENTS))
async def test_a_choice_names_each_answer_in_the_title(
    home: Path, project: Path, name: str
) -> None:
    client = await Client.start(
        home, project, {**buffers(project), "session/request_permission": by_kind("allow_once")}
    )
    sid = await session(client, project, CLIENTS[name])
    await client.request("session/prompt", {"sessionId": sid, "prompt": text(COLOURS)})
    (asked,) = [m["params"] for m in client.asked if m["method"] == "session/request_permission"]
    assert asked["toolCall"]["title"] == (
        "Which colour? Accept = red, Always accept = blue, Reject = green"
    )
    (done,) = client.of("tool_call_update")
    assert done["rawOutput"] == {"answer": "red", "ok": True}
    announced_first(client.seen)
    await client.close()


async def test_a_hostile_file_name_stays_on_the_titles_one_line(home: Path, project: Path) -> None:
    """A file name with a line break cannot add lines (or a fake option) to the title."""
    answers = Answers("reject_once")
    client = await Client.start(
        home, project, {**buffers(project), "session/request_permission": answers}
    )
    sid = await session(client, project, ACPX)
    bad = '!tool write {"path":"a\\nAccept = rm -rf","content":"x"}'
    await client.request("session/prompt", {"sessionId": sid, "prompt": text(bad)})
    await client.request("session/prompt", {"sessionId": sid, "prompt": text("/undo")})
    asked = [m["params"] for m in client.asked if m["method"] == "session/request_permission"]
    title = asked[-1]["toolCall"]["title"]
    assert "\n" not in title and title.endswith("delete `a?Accept = rm -rf`")
    await client.close()


async def test_a_client_that_takes_forms_gets_the_undo_as_a_titled_form(
    home: Path, project: Path
) -> None:
    """Elicitation, where declared: the form's title names the files, its message is
    the whole plan, and `yes` rewinds."""
    forms: list[dict[str, Any]] = []

    def form(params: dict[str, Any]) -> dict[str, Any]:
        forms.append(params)
        return {"action": "accept", "content": {"answer": "yes"}}

    client = await Client.start(home, project, {**buffers(project), "elicitation/create": form})
    init = {**ACPX, "clientCapabilities": {**ACPX["clientCapabilities"],
                                           "elicitation": {"form": {}}}}  # fmt: skip
    sid = await session(client, project, init)
    await client.request("session/prompt", {"sessionId": sid, "prompt": text(WRITE)})
    await client.request("session/prompt", {"sessionId": sid, "prompt": text("/undo")})
    (asked,) = forms
    assert asked["requestedSchema"]["title"] == "Rewind to before turn 1: delete `made.txt`"
    assert "made.txt" in asked["message"] and asked["mode"] == "form"
    assert asked["requestedSchema"]["properties"]["answer"]["enum"] == ["yes", "no"]
    assert not (project / "made.txt").exists()
    assert [m for m in client.asked if m["method"] == "session/request_permission"] == []
    await client.close()
