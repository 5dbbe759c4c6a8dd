"""A reviewing editor that answers wrongly (bugs or malice): every bad answer is a clear
failure for the model, nothing is half-written, and no question outlives its bound or
its turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support.editor import ReviewingEditor

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within
from .test_review import TEN, THREE, results, tool, tools

pytestmark = pytest.mark.e2e
NOT_VALID = "not applied: the editor's answer is not valid: "
UNKNOWN = (
    "the editor reported a result that is not the accepted hunks applied to the file ({}); "
    "what the file holds now is unknown: read it again"
)


@pytest.fixture
def editor() -> ReviewingEditor:
    return ReviewingEditor()


@pytest.fixture
def with_env(spawn: Any, env: dict[str, str], editor: ReviewingEditor) -> Any:
    async def make(**more: str) -> tuple[Client, str]:
        client = await spawn(on_request=editor.handlers(), env={**env, **more})
        await within(client.initialize(**editor.capabilities))
        return client, (await within(client.new_session()))["sessionId"]

    return make


@pytest.fixture
async def reviewing(with_env: Any) -> tuple[Client, str]:
    return await with_env()


BAD_ANSWERS = [
    (None, "expected an object, got NoneType"),
    ("yes", "expected an object, got str"),
    ({"outcome": "maybe"},
     "outcome must be one of accepted, partial, rejected, conflict, not 'maybe'"),
    ({"outcome": "partial", "acceptedHunks": [9], "text": "x", "applied": False},
     "no such hunk: 9"),
    ({"outcome": "partial", "acceptedHunks": ["1"], "text": "x", "applied": False},
     "acceptedHunks must be a list of hunk ids (integers)"),
    ({"outcome": "partial", "acceptedHunks": [1, 1], "text": "x", "applied": False},
     "acceptedHunks names a hunk twice"),
    ({"outcome": "accepted", "acceptedHunks": [1], "text": "x", "applied": False},
     "an accepted change accepts every hunk (else it is partial)"),
    ({"outcome": "partial", "acceptedHunks": [1, 2, 3], "text": THREE, "applied": False},
     "a partial change accepts some hunks, not none or all"),
    ({"outcome": "rejected", "acceptedHunks": [1]}, "a rejected change accepts no hunks"),
    ({"outcome": "accepted", "applied": False},
     "text (the file's content afterwards) must be a string"),
    ({"outcome": "accepted", "text": "not it", "applied": False},
     "text is not the accepted hunks applied to oldText"),
    ({"outcome": "accepted", "text": THREE},
     "applied must be true (the editor applied it) or false"),
    ({"outcome": "rejected", "reason": 5}, "reason must be a string"),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "problem"), BAD_ANSWERS)
async def test_a_bad_answer_changes_nothing_and_says_why(
    reviewing, editor, workdir: Path, answer: Any, problem: str
) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text(TEN)
    editor.decide = lambda params: {"answer": answer}
    (result,) = await results(client, session, tool("write", path="a.txt", content=THREE))
    assert result == {"error": NOT_VALID + problem, "path": "a.txt", "ok": False}
    assert (workdir / "a.txt").read_text() == TEN


async def test_an_applied_text_that_is_not_the_hunks_is_unknown_until_read_again(
    reviewing, editor, workdir: Path
) -> None:
    client, session = reviewing
    buffer = editor.open(workdir / "a.txt", TEN)

    def lie(params: dict[str, Any]) -> dict[str, Any]:
        buffer.set("whatever the editor did\n")
        return {"answer": {"outcome": "accepted", "text": "something", "applied": True}}

    editor.decide = lie
    script = tools(
        ("write", {"path": "a.txt", "content": THREE}),
        ("write", {"path": "a.txt", "content": "again\n"}),
    )
    first, second = await results(client, session, script)
    assert first["error"] == UNKNOWN.format("text is not the accepted hunks applied to oldText")
    # before reading it again, the next change in the turn is a conflict, never shown
    assert second["error"] == "conflict: the file changed since you read it; read it again"
    assert len(editor.proposals) == 1


async def test_a_huge_text_is_refused(with_env, editor, workdir: Path) -> None:
    client, session = await with_env(ELELEM_FILE_CAP="1000")
    (workdir / "a.txt").write_text("a\n")
    huge = "x" * 5000
    editor.decide = lambda params: {
        "answer": {"outcome": "accepted", "text": huge, "applied": False}
    }
    (result,) = await results(client, session, tool("write", path="a.txt", content="b\n"))
    assert result["error"] == NOT_VALID + "text is 5000 characters, past 1000"
    assert (workdir / "a.txt").read_text() == "a\n"


async def test_a_huge_read_is_refused(with_env, editor, workdir: Path) -> None:
    client, session = await with_env(ELELEM_FILE_CAP="1000")
    editor.open(workdir / "a.txt", "x" * 5000)
    (result,) = await results(client, session, tool("read", path="a.txt"))
    assert result["ok"] is False
    assert result["error"] == (
        f"the editor's answer to files/read for {workdir / 'a.txt'} is not valid: "
        "text is 5000 characters, past 1000 (ELELEM_FILE_CAP)"
    )


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"text": 5, "version": 1}, "text must be a string"),
        ({"text": "a"}, "version must be an integer or a string"),
        ({"text": "a", "version": True}, "version must be an integer or a string"),
        ({"text": "a", "version": "v" * 300}, "version is longer than 256 characters"),
        ([], "expected {text, version} or null, got list"),
    ],
)
async def test_a_bad_read_answer_is_a_clear_error(
    reviewing, editor, workdir: Path, answer: Any, problem: str
) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("disk\n")
    client.handlers["files/read"] = lambda params: answer
    (result,) = await results(client, session, tool("read", path="a.txt"))
    assert result["error"] == (
        f"the editor's answer to files/read for {workdir / 'a.txt'} is not valid: {problem}"
    )


async def test_a_read_error_response_is_a_clear_error(reviewing, workdir: Path) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("disk\n")

    def fail(params: Any) -> Any:
        raise RpcError(-32603, "buffer exploded")

    client.handlers["files/read"] = fail
    (result,) = await results(client, session, tool("read", path="a.txt"))
    assert result["ok"] is False
    assert result["error"].startswith(f"the editor could not read {workdir / 'a.txt'}: ")
    assert "buffer exploded" in result["error"]


async def test_a_review_that_runs_out_is_withdrawn(with_env, editor, workdir: Path) -> None:
    client, session = await with_env(ELELEM_REVIEW_TIMEOUT="1")
    (workdir / "a.txt").write_text("a\n")
    editor.decide = lambda params: {"hang": True}
    (result,) = await results(client, session, tool("write", path="a.txt", content="b\n"))
    assert result["error"] == (
        "not applied: the review got no answer within 1 s "
        "(the editor did not answer files/propose within 1 s)"
    )
    await within(until(lambda: editor.withdrawn))  # $/cancelRequest reached the editor
    assert (workdir / "a.txt").read_text() == "a\n"


async def test_a_change_too_large_to_send_is_refused_unsent(
    with_env, editor, workdir: Path
) -> None:
    client, session = await with_env(ELELEM_PROPOSE_CAP="10")
    (workdir / "a.txt").write_text("a\n")
    (result,) = await results(client, session, tool("write", path="a.txt", content="b" * 9))
    assert result["error"] == (
        "not applied: the change is 11 characters, more than the editor is sent to review "
        "(10, ELELEM_PROPOSE_CAP)"
    )
    assert not editor.asked.is_set() and (workdir / "a.txt").read_text() == "a\n"


async def test_a_read_that_runs_out_is_an_error(with_env, editor, workdir: Path) -> None:
    client, session = await with_env(ELELEM_EDITOR_TIMEOUT="1")

    async def never(params: Any) -> Any:
        await asyncio.Event().wait()

    client.handlers["files/read"] = never
    (result,) = await results(client, session, tool("read", path="a.txt"))
    assert result["error"] == (
        f"{workdir / 'a.txt'}: the editor did not answer files/read within 1 s"
    )


async def test_a_review_ends_with_its_turn(reviewing, editor, workdir: Path) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("a\n")
    editor.decide = lambda params: {"hang": True}
    turn = await client.start_turn(session, tool("write", path="a.txt", content="b\n"))
    await within(editor.asked.wait())
    await turn.cancel()
    assert (await within(turn.result()))["stopReason"] == "cancelled"
    await within(until(lambda: editor.withdrawn))
    assert (workdir / "a.txt").read_text() == "a\n"


async def test_a_late_answer_after_the_turn_changes_nothing(reviewing, editor, workdir) -> None:
    client, session = reviewing
    (workdir / "a.txt").write_text("a\n")
    gate = asyncio.Event()

    async def slow(params: Any) -> Any:
        editor.asked.set()
        try:
            await gate.wait()
        except asyncio.CancelledError:
            pass  # a client that ignores the withdrawal and answers anyway
        return {"outcome": "accepted", "text": "b\n", "applied": False}

    client.handlers["files/propose"] = slow
    turn = await client.start_turn(session, tool("write", path="a.txt", content="b\n"))
    await within(editor.asked.wait())
    await turn.cancel()
    assert (await within(turn.result()))["stopReason"] == "cancelled"
    gate.set()
    await asyncio.sleep(0.3)
    assert (workdir / "a.txt").read_text() == "a\n"
    (result,) = await results(client, session, tool("read", path="a.txt"))
    assert result["content"] == "a\n"  # the daemon is fine


# -- paths no editor is asked about -------------------------------------------------------
@pytest.mark.parametrize("path", ["/proc/self/environ", "/dev/null", "/sys/kernel/notes"])
async def test_a_protected_path_never_reaches_the_editor(
    spawn, editor, workdir: Path, path: str
) -> None:
    client = await spawn(on_request=editor.handlers(), on_ask=lambda params: "allow")
    await within(client.initialize(**editor.capabilities))
    session = (await within(client.new_session()))["sessionId"]
    script = tools(("read", {"path": path}), ("write", {"path": path, "content": "x"}))
    read, write = await results(client, session, script)
    for result in (read, write):
        assert result["ok"] is False and result["error"].startswith(f"refused: {path}")
    assert editor.reads == [] and editor.proposals == []


async def test_a_symlink_out_of_the_folder_is_asked_never_reviewed(
    spawn, editor, workdir: Path
) -> None:
    asked: list[Any] = []
    client = await spawn(
        on_request=editor.handlers(), on_ask=lambda params: asked.append(params) or "deny"
    )
    await within(client.initialize(**editor.capabilities))
    session = (await within(client.new_session()))["sessionId"]
    secret = workdir.parent / "secret.txt"
    secret.write_text("theirs\n")
    (workdir / "link.txt").symlink_to(secret)
    (result,) = await results(client, session, tool("write", path="link.txt", content="x\n"))
    assert result["error"] == "User denied permission: write"
    assert [a["kind"] for a in asked] == ["permission"] and editor.proposals == []
    assert secret.read_text() == "theirs\n"


async def test_a_client_gone_mid_review_loses_nothing(spawn, editor, workdir: Path) -> None:
    """The editor exits while a review is open: the daemon ends (its stdin closed), and
    the file is as it was."""
    client = await spawn(on_request=editor.handlers())
    await within(client.initialize(**editor.capabilities))
    session = (await within(client.new_session()))["sessionId"]
    (workdir / "a.txt").write_text("a\n")
    editor.decide = lambda params: {"hang": True}
    await client.start_turn(session, tool("write", path="a.txt", content="b\n"))
    await within(editor.asked.wait())
    assert client.process.stdin is not None
    client.process.stdin.close()
    assert await within(client.process.wait(), 20) is not None
    assert (workdir / "a.txt").read_text() == "a\n"


async def until(condition: Any, step: float = 0.02) -> None:
    while not condition():
        await asyncio.sleep(step)
