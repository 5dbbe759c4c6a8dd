"""A rewind touches only what the agent changed (issue 29), over the wire: the real
daemon, its real checkpoints, a real git repository. The model rewrites `.gitignore`
(with `write`, or with a command through `execute`), shrinks a file over the size
limit: a rewind, forced or not, leaves the user's ignored and unsaved files
byte-identical, and its plan says so (`kept`, `createdBy`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import RpcError

from .conftest import within
from .test_rewind import git, opened, rewind, run, tool

pytestmark = pytest.mark.e2e

SECRET = b"API_TOKEN=the-users-own\n"
DB = bytes(range(256)) * 40


def users_repo(workdir: Path) -> None:
    git(workdir, "init", "-q")
    (workdir / ".gitignore").write_text(".env\n*.sqlite\n")
    (workdir / ".env").write_bytes(SECRET)
    (workdir / "local.sqlite").write_bytes(DB)


@pytest.mark.parametrize("how", ["write", "execute"])
async def test_a_rewind_after_the_model_rewrote_gitignore_keeps_the_users_files(
    spawn: Any, workdir: Path, how: str
) -> None:
    users_repo(workdir)
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    if how == "write":
        change = tool("write", path=".gitignore", content="node_modules/\n")
    else:
        change = tool("execute", command="printf 'node_modules/\\n' > .gitignore")
    first = (await run(client, session, change))["turnId"]
    await run(client, session, tool("write", path="new.txt", content="the agent's\n"))
    plan = await rewind(client, session, first, dryRun=True)
    files = plan["files"]
    assert files["deleted"] == ["new.txt"] and files["createdBy"] == {"new.txt": first + 1}
    assert [(k["path"], k["reason"], k["turn"]) for k in files["kept"]] == [
        (".env", "ignored", first),
        ("local.sqlite", "ignored", first),
    ]
    done = await rewind(client, session, first)  # without force: nothing is the user's
    assert done["files"]["deleted"] == ["new.txt"]
    assert (workdir / ".env").read_bytes() == SECRET
    assert (workdir / "local.sqlite").read_bytes() == DB
    assert (workdir / ".gitignore").read_text() == ".env\n*.sqlite\n"
    assert not (workdir / "new.txt").exists()


async def test_a_shrunk_file_over_the_size_limit_survives_a_forced_rewind(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    (workdir / "data.csv").write_bytes(b"id,value\n" + b"1,22222222\n" * 2000)  # ~20 kB
    client = await spawn(env={**env, "ELELEM_CHECKPOINTS_MAX_FILE": "4K"})
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    first = await run(client, session, tool("write", path="data.csv", content="one line\n"))
    done = await rewind(client, session, first["turnId"], force=True)
    assert done["files"]["deleted"] == []
    assert [(k["path"], k["reason"]) for k in done["files"]["kept"]] == [("data.csv", "too_big")]
    assert (workdir / "data.csv").read_text() == "one line\n"  # left as it is: not deleted


async def test_a_user_file_changed_after_the_plan_needs_a_new_confirm(
    spawn: Any, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("one\n")
    (workdir / "b.txt").write_text("one\n")
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    first = (await run(client, session, tool("write", path="a.txt", content="two\n")))["turnId"]
    (workdir / "a.txt").write_text("the user's\n")
    plan = await rewind(client, session, first, dryRun=True)
    assert plan["files"]["outside"] == ["a.txt"]
    (workdir / "b.txt").write_text("the user's too\n")  # after the plan was shown
    with pytest.raises(RpcError) as caught:
        await rewind(client, session, first, confirm=plan["files"]["outside"])
    assert caught.value.kind == "outside_changes"
    assert caught.value.data["files"]["outside"] == ["a.txt", "b.txt"]
    assert (workdir / "b.txt").read_text() == "the user's too\n"
    for bad in ([1, 2], ["a.txt"] * 10_001):  # not paths; too many
        with pytest.raises(RpcError) as caught:
            await rewind(client, session, first, confirm=bad)
        assert caught.value.kind == "invalid_params"
    done = await rewind(client, session, first, confirm=["a.txt", "b.txt"])
    assert done["files"]["outside"] == ["a.txt", "b.txt"]
    assert (workdir / "a.txt").read_text() == "one\n"


async def test_checkpoints_number_the_turns_as_the_user_counts_them(
    spawn: Any, workdir: Path
) -> None:
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    first = (await run(client, session, tool("write", path="a.txt", content="a")))["turnId"]
    await within(client.command(session, "/context"))  # a command takes an id too
    second = (await run(client, session, tool("write", path="b.txt", content="b")))["turnId"]
    listed = await within(client.request("session/checkpoints", {"sessionId": session}))
    assert [(t["turnId"], t["number"]) for t in listed["turns"]] == [(first, 1), (second, 2)]
    assert second == first + 2


CASES = {  # what the model's command does, and the user's file that must stay
    "gitignore-deleted": ("rm .gitignore", ".env", "ignored"),
    "un-ignored": ("printf '' > .git/info/exclude", "notes/mine.md", "ignored"),
    "nested-repository-unmade": ("rm -rf vendor/lib/.git", "vendor/lib/code.c", "nested"),
    "big-file-shrunk": ("printf 'one\\n' > data.csv", "data.csv", "too_big"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_command_that_unhides_the_users_files_deletes_none(
    spawn: Any, env: dict[str, str], workdir: Path, case: str
) -> None:
    command, path, reason = CASES[case]
    users_repo(workdir)
    (workdir / ".git" / "info").mkdir(exist_ok=True)
    (workdir / ".git" / "info" / "exclude").write_text("notes/\n")
    (workdir / "notes").mkdir()
    (workdir / "notes" / "mine.md").write_text("the user's notes\n")
    (workdir / "vendor" / "lib").mkdir(parents=True)
    git(workdir / "vendor" / "lib", "init", "-q")
    (workdir / "vendor" / "lib" / "code.c").write_text("int x;\n")
    (workdir / "data.csv").write_bytes(b"id,value\n" + b"1,22222222\n" * 2000)
    before = (workdir / path).read_bytes()
    client = await spawn(env={**env, "ELELEM_CHECKPOINTS_MAX_FILE": "4K"})
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    first = (await run(client, session, tool("execute", command=command)))["turnId"]
    done = await rewind(client, session, first, force=True)
    assert done["files"]["deleted"] == []
    assert (path, reason) in [(k["path"], k["reason"]) for k in done["files"]["kept"]]
    if case == "big-file-shrunk":
        assert (workdir / path).read_bytes() == b"one\n"  # left as it is
    else:
        assert (workdir / path).read_bytes() == before
