"""Rewind over the wire (protocol.md, "Rewind"): `session/rewind` and
`session/checkpoints` against the real daemon, its real checkpoints and a real folder."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e


def tree(root: Path) -> dict[str, Any]:
    """Every entry under root (but .git): bytes, mode, symlink target, empty folders."""
    found: dict[str, Any] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if name == ".git" or name.startswith(".git/"):
            continue
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            found[name] = ("link", os.readlink(path))
        elif stat.S_ISDIR(mode):
            found[name] = ("dir", None if any(path.iterdir()) else "empty")
        else:
            found[name] = ("file", path.read_bytes(), stat.S_IMODE(mode))
    return found


def git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=folder, capture_output=True, text=True, check=True
    ).stdout


def tool(name: str, **arguments: Any) -> str:
    return f"!tool {name} {json.dumps(arguments)}"


async def opened(spawn: Any) -> Client:
    client = await spawn()
    await within(client.initialize())
    return client


async def rewind(client: Client, session: str, turn: int, **params: Any) -> dict[str, Any]:
    return await within(
        client.request("session/rewind", {"sessionId": session, "turnId": turn, **params}), 30
    )


async def run(client: Client, session: str, text: str) -> dict[str, Any]:
    done = await within(client.turn(session, text), 30)
    assert done["stopReason"] == "end_turn", done
    return done


async def agent_work(client: Client, session: str, workdir: Path) -> int:
    """Turns that write, edit, create and delete files, and an execute that runs
    `sed -i`, `rm`, `mkdir`, `chmod`; returns the first turn's id."""
    first = await run(client, session, tool("write", path="new.txt", content="created\n"))
    await run(client, session, tool("edit", path="a.txt", old="alpha", new="ALPHA"))
    script = (
        "sed -i s/beta/BETA/ b.txt && rm gone.txt && rm -r emptydir && mkdir made "
        "&& chmod 600 run.sh && printf x > made/in.txt"
    )
    await run(client, session, tool("execute", command=script))
    return first["turnId"]


def seed(workdir: Path) -> None:
    (workdir / "a.txt").write_text("alpha\n")
    (workdir / "b.txt").write_text("beta\n")
    (workdir / "gone.txt").write_text("to be removed\n")
    (workdir / "emptydir").mkdir()
    (workdir / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (workdir / "run.sh").chmod(0o755)
    (workdir / "secret").write_text("s3cret\n")
    (workdir / "secret").chmod(0o600)
    (workdir / "link").symlink_to("a.txt")


@pytest.mark.parametrize("in_git", [True, False], ids=["git-repository", "plain-folder"])
async def test_a_turn_is_rewound_byte_for_byte_and_the_users_git_sees_nothing(
    spawn: Any, workdir: Path, in_git: bool
) -> None:
    seed(workdir)
    if in_git:
        git(workdir, "init", "-q")
        git(workdir, "add", "-A")
        git(workdir, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "one")
        (workdir / "a.txt").write_text("alpha\nstaged\n")  # a staged change, and a stash
        git(workdir, "add", "a.txt")
        traces = [git(workdir, *a) for a in (["status", "--porcelain"], ["stash", "list"],
                  ["reflog"], ["for-each-ref"])]  # fmt: skip
        index = (workdir / ".git" / "index").read_bytes()
    before = tree(workdir)
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    first = await agent_work(client, session, workdir)
    assert tree(workdir) != before

    listed = await within(client.request("session/checkpoints", {"sessionId": session}))
    assert listed["enabled"] is True
    assert [t["turnId"] for t in listed["turns"]] == [first, first + 1, first + 2]
    assert listed["turns"][0]["checkpoint"] == "git" and listed["turns"][0]["ended"] is True
    assert listed["turns"][0]["files"] == ["new.txt"]

    done = await rewind(client, session, first)
    if in_git:  # before any git of ours refreshes its stat cache
        assert (workdir / ".git" / "index").read_bytes() == index
    assert tree(workdir) == before
    files = done["files"]
    assert "new.txt" in files["deleted"] and "gone.txt" in files["created"]
    assert {"a.txt", "b.txt"} <= set(files["restored"]) and files["outside"] == []
    assert done["conversation"] == {"dropped": [first, first + 1, first + 2]}
    assert done["messages"] == []  # the history to redraw: nothing before the first turn
    assert len(await within(client.context(session))) == 1  # the system prompt alone
    if in_git:
        after = [git(workdir, *a) for a in (["status", "--porcelain"], ["stash", "list"],
                 ["reflog"], ["for-each-ref"])]  # fmt: skip
        assert after == traces
        assert git(workdir, "diff", "--cached", "--name-only") == "a.txt\n"  # still staged

    again = await within(client.request("session/checkpoints", {"sessionId": session}))
    assert again["turns"] == []  # the dropped turns' checkpoints went with them
    nxt = await run(client, session, "!echo after")
    assert nxt["turnId"] > first + 2  # numbers never come back


async def test_a_turn_that_does_not_exist_is_refused_and_nothing_changes(
    spawn: Any, workdir: Path
) -> None:
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    first = (await run(client, session, tool("write", path="x.txt", content="x")))["turnId"]
    for bad in (first + 5, 0, -1):
        with pytest.raises(RpcError) as caught:
            await rewind(client, session, bad)
        assert (caught.value.code, caught.value.kind) == (-32602, "unknown_turn")
        assert caught.value.data["turnId"] == bad and str(first) in caught.value.message
    for bad_params in ({"turnId": "1"}, {"turnId": True}, {"turnId": 1.5}, {}):
        with pytest.raises(RpcError) as caught:
            await within(client.request("session/rewind", {"sessionId": session, **bad_params}))
        assert caught.value.kind == "invalid_params"
    with pytest.raises(RpcError) as caught:
        await rewind(client, session, first, files=False, conversation=False)
    assert caught.value.kind == "invalid_params"
    with pytest.raises(RpcError) as caught:
        await rewind(client, "no-such-session", first)
    assert caught.value.kind == "unknown_session"
    assert (workdir / "x.txt").read_text() == "x"
    assert len(await within(client.context(session))) > 1


async def test_a_rewind_while_a_turn_runs_is_refused(spawn: Any, workdir: Path) -> None:
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    other = (await within(client.new_session()))["sessionId"]  # same folder
    first = (await run(client, session, tool("write", path="x.txt", content="x")))["turnId"]
    theirs = (await run(client, other, "!echo other's"))["turnId"]
    turn = await client.start_turn(session, tool("execute", command="sleep 30"))
    async for event in turn.events():
        if event["method"] == "event/doing":
            break
    with pytest.raises(RpcError) as caught:
        await rewind(client, session, first)
    assert (caught.value.code, caught.value.kind) == (-32001, "session_busy")
    with pytest.raises(RpcError) as caught:  # another session of the folder waits too
        await rewind(client, other, theirs)
    assert caught.value.kind == "session_busy" and caught.value.data["sessionId"] == session
    said = await within(client.command(other, "/undo"))  # a command: the same rule
    assert f"a turn is running in {workdir.resolve()} (session {session})" in said["output"]
    assert (workdir / "x.txt").read_text() == "x"
    await client.cancel(session)
    await within(turn, 15)
    done = await rewind(client, session, first)
    assert not (workdir / "x.txt").exists() and done["files"]["deleted"] == ["x.txt"]


async def test_the_users_own_edits_are_named_and_kept_until_forced(
    spawn: Any, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("one\n")
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    first = await run(client, session, tool("edit", path="a.txt", old="one", new="two"))
    (workdir / "a.txt").write_text("the user's\n")  # after the turn: outside the agent
    plan = await rewind(client, session, first["turnId"], dryRun=True)
    assert plan["dryRun"] is True and plan["files"]["outside"] == ["a.txt"]
    assert plan["conversation"] == {"dropped": [first["turnId"]]}
    with pytest.raises(RpcError) as caught:
        await rewind(client, session, first["turnId"])
    assert (caught.value.code, caught.value.kind) == (-32004, "outside_changes")
    assert caught.value.data["files"]["outside"] == ["a.txt"] and "a.txt" in caught.value.message
    assert (workdir / "a.txt").read_text() == "the user's\n"  # not clobbered
    assert len(await within(client.context(session))) > 1  # nor the conversation
    done = await rewind(client, session, first["turnId"], force=True)
    assert (workdir / "a.txt").read_text() == "one\n" and done["files"]["outside"] == ["a.txt"]


async def test_files_or_conversation_alone(spawn: Any, workdir: Path) -> None:
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    first = (await run(client, session, tool("write", path="x.txt", content="x")))["turnId"]
    done = await rewind(client, session, first, conversation=False)
    assert not (workdir / "x.txt").exists() and done["conversation"] is None
    assert [m["content"] for m in await within(client.context(session))][1] == tool(
        "write", path="x.txt", content="x"
    )
    (workdir / "x.txt").write_text("mine")
    done = await rewind(client, session, first, files=False)
    assert done["files"] is None and done["conversation"] == {"dropped": [first]}
    assert (workdir / "x.txt").read_text() == "mine"
    assert len(await within(client.context(session))) == 1  # the system prompt alone


async def test_rewind_after_a_restart_and_session_load(spawn: Any, workdir: Path) -> None:
    (workdir / "a.txt").write_text("one\n")
    before = tree(workdir)
    first = await opened(spawn)
    session = (await within(first.new_session()))["sessionId"]
    one = await run(first, session, "!echo hello")
    two = await run(first, session, tool("edit", path="a.txt", old="one", new="two"))
    await run(first, session, tool("write", path="b.txt", content="b"))
    await within(first.close())

    second = await opened(spawn)
    loaded = await within(second.load_session(session))
    assert loaded["turns"] == two["turnId"] + 1
    listed = await within(second.request("session/checkpoints", {"sessionId": session}))
    assert [t["turnId"] for t in listed["turns"]] == [
        one["turnId"],
        two["turnId"],
        two["turnId"] + 1,
    ]
    assert listed["turns"][0]["checkpoint"] is None  # it changed no file
    assert listed["turns"][0]["prompt"] == "!echo hello"
    done = await rewind(second, session, two["turnId"])
    assert tree(workdir) == before
    assert [m["content"] for m in done["messages"]] == ["!echo hello", "hello"]
    await within(second.close())

    third = await opened(spawn)  # the store kept the rewind: a reload agrees
    loaded = await within(third.load_session(session))
    assert [m["content"] for m in loaded["messages"]] == ["!echo hello", "hello"]
    nxt = await run(third, session, "!echo again")
    assert nxt["turnId"] > two["turnId"] + 1


async def test_checkpoints_turned_off_rewind_the_conversation_only(
    spawn: Any, workdir: Path, env: dict[str, str]
) -> None:
    client = await spawn(env={**env, "ELELEM_CHECKPOINTS": "0"})
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    first = (await run(client, session, tool("write", path="x.txt", content="x")))["turnId"]
    listed = await within(client.request("session/checkpoints", {"sessionId": session}))
    assert listed["enabled"] is False and listed["turns"][0]["checkpoint"] is None
    with pytest.raises(RpcError) as caught:
        await rewind(client, session, first)
    assert (caught.value.code, caught.value.kind) == (-32005, "no_checkpoint")
    assert caught.value.data["reason"] == "disabled"
    done = await rewind(client, session, first, files=False)
    assert done["conversation"] == {"dropped": [first]} and (workdir / "x.txt").exists()
    state = Path(env["XDG_STATE_HOME"]) / "elelem" / "checkpoints"
    assert not state.exists() or not any(state.iterdir())


async def test_undo_is_a_command_that_asks_first(spawn: Any, workdir: Path) -> None:
    asked: list[dict[str, Any]] = []

    def answer(params: dict[str, Any]) -> str:
        asked.append(params)
        return "yes"

    client = await spawn(on_ask=answer)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    await run(client, session, tool("write", path="x.txt", content="x"))
    done = await within(client.command(session, "/undo"), 30)
    assert not (workdir / "x.txt").exists()
    (question,) = asked
    assert question["kind"] == "confirm" and question["options"] == ["yes", "no"]
    assert question["tool"]["name"] == "rewind" and "x.txt" in question["prompt"]
    assert "rewound to before turn" in done["output"]
    done = await within(client.command(session, "/undo"))
    assert "nothing to undo" in done["output"]


def shadow_refs(env: dict[str, str], workdir: Path) -> list[str]:
    root = Path(env["XDG_STATE_HOME"]) / "elelem" / "checkpoints"
    (shadow,) = [p for p in root.iterdir() if (p / "cwd").is_file()]
    assert (shadow / "cwd").read_text().strip() == str(workdir.resolve())
    return git(shadow, "--git-dir", str(shadow), "for-each-ref", "--format=%(refname)").split()


async def test_session_delete_takes_its_checkpoints(
    spawn: Any, workdir: Path, env: dict[str, str]
) -> None:
    client = await opened(spawn)
    keep = (await within(client.new_session()))["sessionId"]
    gone = (await within(client.new_session()))["sessionId"]
    await run(client, keep, tool("write", path="k.txt", content="k"))
    await run(client, gone, tool("write", path="g.txt", content="g"))
    refs = shadow_refs(env, workdir)
    assert any(f"/{gone}/" in r for r in refs) and any(f"/{keep}/" in r for r in refs)
    await within(client.delete_session(gone))
    refs = shadow_refs(env, workdir)
    assert not any(f"/{gone}/" in r for r in refs) and any(f"/{keep}/" in r for r in refs)
