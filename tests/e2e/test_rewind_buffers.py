"""Checkpoints with an editor that applies the agent's changes to its buffers (issue 17
with issue 16): over the real daemon, with the scripted editor of tests/support/editor.py
answering `files/read` and `files/propose`. What the editor applied is the turn's end
state, saved or not (docs/checkpoints.md, "Editor buffers")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.editor import ReviewingEditor

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


def tool(name: str, **args: Any) -> str:
    return f"!tool {name} {json.dumps(args)}"


@pytest.fixture
def editor() -> ReviewingEditor:
    return ReviewingEditor()


@pytest.fixture
async def reviewing(spawn: Any, editor: ReviewingEditor) -> tuple[Client, str]:
    client = await spawn(on_request=editor.handlers(), on_ask=lambda params: "deny")
    await within(client.initialize(**editor.capabilities))
    return client, (await within(client.new_session()))["sessionId"]


async def buffered_turn(client: Client, session: str, editor: ReviewingEditor, path: Path) -> int:
    """A turn whose edit of `path` the editor applies to its open buffer (not saved)."""
    editor.open(path, path.read_text())
    done = await within(
        client.turn(session, tool("edit", path=path.name, old="one", new="two")), 30
    )
    assert done["stopReason"] == "end_turn", done
    assert editor.buffers[str(path)].text == "two\n" and path.read_text() == "one\n"
    return int(done["turnId"])


async def rewind(client: Client, session: str, turn: int, **params: Any) -> dict[str, Any]:
    return await within(
        client.request("session/rewind", {"sessionId": session, "turnId": turn, **params}), 30
    )


async def test_a_change_left_unsaved_in_a_buffer_is_in_the_turns_files(
    reviewing, editor, workdir: Path
) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("one\n")
    turn = await buffered_turn(client, session, editor, workdir / "a.txt")
    listed = await within(client.request("session/checkpoints", {"sessionId": session}))
    (entry,) = [t for t in listed["turns"] if t["turnId"] == turn]
    assert entry["files"] == ["a.txt"] and entry["filesTotal"] == 1


async def test_saving_the_agents_buffer_after_the_turn_is_not_an_outside_change(
    reviewing, editor, workdir: Path
) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("one\n")
    turn = await buffered_turn(client, session, editor, workdir / "a.txt")
    (workdir / "a.txt").write_text(editor.buffers[str(workdir / "a.txt")].text)  # :w
    plan = await rewind(client, session, turn, dryRun=True)
    assert plan["files"]["outside"] == [] and plan["files"]["restored"] == ["a.txt"]
    assert plan["files"]["buffers"] == ["a.txt"]
    done = await rewind(client, session, turn)  # no force needed: nothing of the user's
    assert (workdir / "a.txt").read_text() == "one\n"
    assert done["files"]["buffers"] == ["a.txt"]


async def test_rewind_of_an_unsaved_buffer_change_names_the_buffer(
    reviewing, editor, workdir: Path
) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("one\n")
    turn = await buffered_turn(client, session, editor, workdir / "a.txt")
    plan = await rewind(client, session, turn, dryRun=True)
    assert plan["files"]["outside"] == []
    assert plan["files"]["restored"] == ["a.txt"] and plan["files"]["buffers"] == ["a.txt"]
    done = await rewind(client, session, turn)
    assert done["files"]["restored"] == ["a.txt"] and done["files"]["buffers"] == ["a.txt"]
    assert (workdir / "a.txt").read_text() == "one\n"  # the disk as before the turn


async def test_the_users_edits_on_top_of_the_agents_saved_change_are_outside(
    reviewing, editor, workdir: Path
) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("one\n")
    turn = await buffered_turn(client, session, editor, workdir / "a.txt")
    (workdir / "a.txt").write_text("two\nand the user's line\n")  # edited, then saved
    plan = await rewind(client, session, turn, dryRun=True)
    assert plan["files"]["outside"] == ["a.txt"]
    with pytest.raises(RpcError) as caught:
        await rewind(client, session, turn)
    assert caught.value.kind == "outside_changes"
    assert (workdir / "a.txt").read_text() == "two\nand the user's line\n"
