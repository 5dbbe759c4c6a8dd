"""Work through the editor (issue 16), over the real daemon with a scripted reviewing
editor (tests/support/editor.py): reads see unsaved buffers, changes are reviewed hunk
by hunk and land in the buffer, and the model reads exactly what happened."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.editor import ReviewingEditor

from elelem_daemon.edits.changes import NOT_ON_DISK
from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e

TEN = "".join(f"line {i}\n" for i in range(1, 31))  # 30 lines
THREE = TEN.replace("line 2\n", "LINE 2\n").replace("line 15\n", "LINE 15\n")
THREE = THREE.replace("line 28\n", "LINE 28\n")  # three hunks, far apart


@pytest.fixture
def editor() -> ReviewingEditor:
    return ReviewingEditor()


@pytest.fixture
async def reviewing(spawn: Any, editor: ReviewingEditor) -> tuple[Client, str]:
    client = await spawn(on_request=editor.handlers(), on_ask=lambda params: "deny")
    await within(client.initialize(**editor.capabilities))
    return client, (await within(client.new_session()))["sessionId"]


def tool(name: str, **args: Any) -> str:
    return f"!tool {name} {json.dumps(args)}"


def tools(*calls: tuple[str, dict[str, Any]]) -> str:
    return f"!tools {json.dumps([list(c) for c in calls])}"


async def results(client: Client, session: str, text: str) -> list[dict[str, Any]]:
    """The tool results the model read in one turn, in order."""
    seen: list[dict[str, Any]] = []

    def keep(event: dict[str, Any]) -> None:
        if event["method"] == "event/result":
            seen.append(event["params"]["result"])

    answer = await within(client.turn(session, text, on_event=keep), 30)
    assert answer["stopReason"] == "end_turn"
    return seen


# -- reading ------------------------------------------------------------------------
async def test_read_sees_the_unsaved_buffer(reviewing, editor, workdir: Path) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("on disk\n")
    editor.open(workdir / "a.txt", "unsaved\n")
    (result,) = await results(client, session, tool("read", path="a.txt"))
    assert result == {"content": "unsaved\n", "path": "a.txt", "ok": True}
    assert editor.reads == [{"sessionId": session, "path": str(workdir / "a.txt")}]


async def test_a_file_not_open_is_read_from_disk(reviewing, editor, workdir: Path) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("on disk\n")
    (result,) = await results(client, session, tool("read", path="a.txt"))
    assert result["content"] == "on disk\n"
    assert len(editor.reads) == 1  # asked, answered null


# -- the four outcomes ----------------------------------------------------------------
async def test_accepted_lands_in_the_buffer(reviewing, editor, workdir: Path) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("on disk\n")
    buffer = editor.open(workdir / "a.txt", "hello world\n")
    (result,) = await results(client, session, tool("edit", path="a.txt", old="world", new="there"))
    assert result == {
        "bytes": 12,
        "path": "a.txt",
        "diff": "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-hello world\n+hello there\n",
        "review": "accepted by the user",
        "replaced": "world",
        "with": "there",
        "disk": NOT_ON_DISK,  # the editor kept it unsaved: the model is told so
        "ok": True,
    }
    assert buffer.text == "hello there\n" and buffer.undo == ["hello world\n"]
    assert (workdir / "a.txt").read_text() == "on disk\n"  # the buffer, not the disk
    (proposal,) = editor.proposals
    assert proposal == {
        "sessionId": session,
        "turnId": 1,
        "toolCallId": "stub-1",
        "path": str(workdir / "a.txt"),
        "review": True,
        "oldText": "hello world\n",
        "newText": "hello there\n",
        "hunks": [
            {
                "id": 1,
                "oldStart": 1,
                "oldLines": 1,
                "newStart": 1,
                "newLines": 1,
                "diff": "@@ -1 +1 @@\n-hello world\n+hello there\n",
            }
        ],
        "baseVersion": 1,
    }


async def test_partial_keeps_exactly_the_accepted_hunks(reviewing, editor, workdir) -> None:
    client, session = reviewing
    buffer = editor.open(workdir / "a.txt", TEN)
    editor.decide = lambda params: {"accept": [1, 3]}
    (result,) = await results(client, session, tool("write", path="a.txt", content=THREE))
    expected = TEN.replace("line 2\n", "LINE 2\n").replace("line 28\n", "LINE 28\n")
    assert buffer.text == expected
    assert result == {
        "bytes": len(expected),
        "path": "a.txt",
        "diff": (
            "--- a.txt\n+++ a.txt\n"
            "@@ -1,5 +1,5 @@\n line 1\n-line 2\n+LINE 2\n line 3\n line 4\n line 5\n"
            "@@ -25,6 +25,6 @@\n line 25\n line 26\n line 27\n-line 28\n+LINE 28\n"
            " line 29\n line 30\n"
        ),
        "review": "applied 2 of 3 hunks; hunk 2 (lines 12–18) was rejected by the user",
        "disk": NOT_ON_DISK,
        "ok": True,
    }


async def test_partial_with_a_reason_and_two_rejected(reviewing, editor, workdir) -> None:
    client, session = reviewing
    editor.open(workdir / "a.txt", TEN)
    editor.decide = lambda params: {"accept": [2], "reason": "keep the lower case"}
    (result,) = await results(client, session, tool("write", path="a.txt", content=THREE))
    assert result["review"] == (
        "applied 1 of 3 hunks; hunks 1 (lines 1–5) and 3 (lines 25–30) were rejected by "
        "the user; the user said: keep the lower case"
    )


async def test_rejected_changes_nothing(reviewing, editor, workdir: Path) -> None:
    client, session = reviewing
    buffer = editor.open(workdir / "a.txt", TEN)
    editor.decide = lambda params: {"reason": "not now"}
    (result,) = await results(client, session, tool("write", path="a.txt", content=THREE))
    assert result == {
        "error": "the user rejected the change: not now",
        "path": "a.txt",
        "ok": False,
    }
    assert buffer.text == TEN and buffer.version == 1
    editor.decide = lambda params: {}
    (result,) = await results(client, session, tool("write", path="a.txt", content=THREE))
    assert result["error"] == "the user rejected the change"


async def test_a_buffer_changed_since_the_read_is_a_conflict_before_any_review(
    reviewing, editor, workdir: Path
) -> None:
    client, session = reviewing
    buffer = editor.open(workdir / "a.txt", "one\n")
    read = editor.read

    async def then_the_user_types(params: dict[str, Any]) -> Any:
        answer = await read(params)
        if len(editor.reads) == 1:
            asyncio.get_running_loop().call_soon(editor.type, workdir / "a.txt", "one!\n")
        return answer

    client.handlers["files/read"] = then_the_user_types
    script = tools(("read", {"path": "a.txt"}), ("write", {"path": "a.txt", "content": "two\n"}))
    first, second = await results(client, session, script)
    assert first["content"] == "one\n"
    assert second == {
        "error": "conflict: the file changed since you read it; read it again",
        "path": "a.txt",
        "ok": False,
    }
    assert editor.proposals == [] and buffer.text == "one!\n"


async def test_a_conflict_comes_before_the_permission_question(
    spawn, editor, env, workdir: Path
) -> None:
    """An editor that reads and applies but does not review, and `write ask`: the
    permission hook checks the conflict before it asks, so nothing is shown."""
    Path(env["XDG_CONFIG_HOME"], "elelem", "permissions").write_text("write ask\n")
    asked: list[Any] = []
    client = await spawn(
        on_request=editor.handlers(), on_ask=lambda params: asked.append(params) or "allow"
    )
    await within(client.initialize(files={"read": True, "apply": True}))
    session = (await within(client.new_session()))["sessionId"]
    buffer = editor.open(workdir / "a.txt", "one\n")
    read = editor.read

    async def then_the_user_types(params: dict[str, Any]) -> Any:
        answer = await read(params)
        if len(editor.reads) == 1:
            asyncio.get_running_loop().call_soon(editor.type, workdir / "a.txt", "one!\n")
        return answer

    client.handlers["files/read"] = then_the_user_types
    script = tools(("read", {"path": "a.txt"}), ("write", {"path": "a.txt", "content": "two\n"}))
    _, second = await results(client, session, script)
    assert second["ok"] is False
    assert second["error"] == "conflict: the file changed since you read it; read it again"
    assert asked == [] and editor.proposals == [] and buffer.text == "one!\n"
    # read again, the same write is asked about, then applied through the buffer
    script = tools(("read", {"path": "a.txt"}), ("write", {"path": "a.txt", "content": "two\n"}))
    _, second = await results(client, session, script)
    assert second["ok"] is True and "review" not in second
    assert [a["kind"] for a in asked] == ["permission"] and buffer.text == "two\n"
    assert [p["review"] for p in editor.proposals] == [False]


async def test_the_user_typing_during_the_review_is_a_conflict(reviewing, editor, workdir) -> None:
    client, session = reviewing
    buffer = editor.open(workdir / "a.txt", "one\n")
    editor.decide = lambda params: {"edit": "mine\n", "accept": "all"}
    (result,) = await results(client, session, tool("write", path="a.txt", content="two\n"))
    assert result["error"] == "conflict: the file changed since you read it; read it again"
    assert buffer.text == "mine\n"


async def test_a_read_then_an_edit_in_the_same_turn_is_no_conflict(reviewing, editor, workdir):
    client, session = reviewing
    buffer = editor.open(workdir / "a.txt", "one\n")
    script = tools(
        ("read", {"path": "a.txt"}),
        ("edit", {"path": "a.txt", "old": "one", "new": "two"}),
        ("edit", {"path": "a.txt", "old": "two", "new": "three"}),
    )
    _, first, second = await results(client, session, script)
    assert first["ok"] and second["ok"] and buffer.text == "three\n"
    assert [p["oldText"] for p in editor.proposals] == ["one\n", "two\n"]
    assert [p["baseVersion"] for p in editor.proposals] == [1, 2]


# -- what the model is told is true on disk (protocol.md, "Files") ----------------------
async def test_an_accepted_change_the_editor_saved_is_seen_by_the_next_command(
    reviewing, editor, workdir: Path
) -> None:
    client, session = reviewing
    editor.saves = True
    (workdir / "a.txt").write_text("hello world\n")
    editor.open(workdir / "a.txt", "hello world\n")
    script = tools(
        ("edit", {"path": "a.txt", "old": "world", "new": "there"}),
        ("execute", {"command": "grep -c 'hello there' a.txt || echo NOT-ON-DISK"}),
    )
    edit, grep = await results(client, session, script)
    assert edit["ok"] and edit["review"] == "accepted by the user" and "disk" not in edit
    assert "NOT-ON-DISK" not in json.dumps(grep) and "1" in json.dumps(grep)


async def test_a_change_left_unsaved_is_said_to_the_model(reviewing, editor, workdir) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("hello world\n")
    editor.open(workdir / "a.txt", "hello world\n")
    (result,) = await results(client, session, tool("edit", path="a.txt", old="world", new="x"))
    assert result["ok"] and result["disk"] == NOT_ON_DISK
    assert (workdir / "a.txt").read_text() == "hello world\n"


# -- files the editor does not have open ------------------------------------------------
async def test_a_file_not_open_is_reviewed_then_written_by_the_daemon(
    reviewing, editor, workdir: Path
) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text(TEN)
    editor.decide = lambda params: {"accept": [1]}
    (result,) = await results(client, session, tool("write", path="a.txt", content=THREE))
    assert (workdir / "a.txt").read_text() == TEN.replace("line 2\n", "LINE 2\n")
    assert result["review"] == (
        "applied 1 of 3 hunks; hunks 2 (lines 12–18) and 3 (lines 25–30) were rejected by the user"
    )
    (proposal,) = editor.proposals
    assert proposal["baseVersion"].startswith("sha256:") and proposal["review"] is True


async def test_a_new_file_is_proposed_from_nothing(reviewing, editor, workdir: Path) -> None:
    client, session = reviewing
    (result,) = await results(client, session, tool("write", path="new/b.txt", content="hi\n"))
    (proposal,) = editor.proposals
    assert proposal["oldText"] is None and proposal["baseVersion"] is None
    assert proposal["hunks"][0]["diff"] == "@@ -0,0 +1 @@\n+hi\n"
    assert (workdir / "new" / "b.txt").read_text() == "hi\n"
    assert result["diff"] == "--- /dev/null\n+++ new/b.txt\n@@ -0,0 +1 @@\n+hi\n"


async def test_the_disk_changed_during_the_review_is_a_conflict(reviewing, editor, workdir):
    client, session = reviewing
    (workdir / "a.txt").write_text("one\n")

    def meanwhile(params: dict[str, Any]) -> dict[str, Any]:
        (workdir / "a.txt").write_text("someone else\n")
        return {"accept": "all"}

    editor.decide = meanwhile
    (result,) = await results(client, session, tool("write", path="a.txt", content="two\n"))
    assert result["error"] == "conflict: the file changed since you read it; read it again"
    assert (workdir / "a.txt").read_text() == "someone else\n"


# -- many changes in a turn -------------------------------------------------------------
async def test_each_change_is_reviewed_when_it_is_made(reviewing, editor, workdir) -> None:
    client, session = reviewing
    buffer = editor.open(workdir / "a.txt", "a\n")
    answers = iter([{}, {"accept": "all"}])
    editor.decide = lambda params: next(answers)
    script = tools(
        ("write", {"path": "a.txt", "content": "b\n"}),
        ("write", {"path": "a.txt", "content": "c\n"}),
    )
    first, second = await results(client, session, script)
    assert first["error"] == "the user rejected the change"
    assert second["review"] == "accepted by the user"
    assert [p["oldText"] for p in editor.proposals] == ["a\n", "a\n"]
    assert buffer.text == "c\n"


async def test_accept_all_for_the_turn(reviewing, editor, workdir: Path) -> None:
    client, session = reviewing
    buffer = editor.open(workdir / "a.txt", "a\n")
    editor.decide = lambda params: {"accept": "all", "acceptAllForTurn": True}
    script = tools(
        ("write", {"path": "a.txt", "content": "b\n"}),
        ("write", {"path": "a.txt", "content": "c\n"}),
        ("write", {"path": "a.txt", "content": "d\n"}),
    )
    got = await results(client, session, script)
    assert [r.get("review") for r in got] == [
        "accepted by the user",
        "accepted: the user accepts every change in this turn",
        "accepted: the user accepts every change in this turn",
    ]
    assert [p["review"] for p in editor.proposals] == [True, False, False]
    assert buffer.text == "d\n" and len(buffer.undo) == 3
    await results(client, session, tool("write", path="a.txt", content="e\n"))
    assert editor.proposals[-1]["review"] is True  # the next turn is reviewed again


# -- the policy --------------------------------------------------------------------------
async def test_allow_applies_through_the_buffer_unreviewed(spawn, editor, env, workdir) -> None:
    Path(env["XDG_CONFIG_HOME"], "elelem", "permissions").write_text("write allow\n")
    client = await spawn(on_request=editor.handlers())
    await within(client.initialize(**editor.capabilities))
    session = (await within(client.new_session()))["sessionId"]
    buffer = editor.open(workdir / "a.txt", "a\n")
    (result,) = await results(client, session, tool("write", path="a.txt", content="b\n"))
    assert result == {
        "bytes": 2,
        "path": "a.txt",
        "diff": "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-a\n+b\n",
        "disk": NOT_ON_DISK,
        "ok": True,
    }
    assert [p["review"] for p in editor.proposals] == [False] and buffer.text == "b\n"
    assert not (workdir / "a.txt").exists()  # in the buffer only: the editor saves it


async def test_outside_the_folder_asks_instead(reviewing, editor, workdir: Path) -> None:
    client, session = reviewing
    asked: list[dict[str, Any]] = []
    client.on_ask = lambda params: asked.append(params) or "deny"
    outside = workdir.parent / "elsewhere.txt"
    (result,) = await results(client, session, tool("write", path=str(outside), content="x"))
    assert result["error"] == "User denied permission: write"
    assert asked[0]["kind"] == "permission" and editor.proposals == []


async def test_without_the_capability_nothing_is_reviewed(client, session, workdir) -> None:
    (workdir / "a.txt").write_text("a\n")
    (result,) = await results(client, session, tool("write", path="a.txt", content="b\n"))
    assert "review" not in result and (workdir / "a.txt").read_text() == "b\n"


async def test_bad_file_capabilities_are_invalid_params(spawn) -> None:
    client = await spawn()
    with pytest.raises(RpcError) as caught:
        await within(client.initialize(files={"review": "yes"}))
    assert caught.value.kind == "invalid_params"
    assert caught.value.data["errors"] == ["capabilities.files.review: expected a boolean"]
