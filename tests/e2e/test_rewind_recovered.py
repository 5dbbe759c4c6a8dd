"""No byte the user owned before a turn is destroyed by undoing it (issue 36): an
ignored `.env` that an approved `execute` command moved, copied then removed, or
appended into a tracked file is gone from where the checkpoint left it out; the rewind
deletes or overwrites where its bytes went, so it first keeps those files aside in
elelem's state folder (`recovered/`), names them in the plan, and the secret's bytes
are still on disk after the undo: through `/undo` (the daemon's `input/ask`) and
`session/rewind`. Also: a file named in the plan and edited again while the question
is open is not overwritten by the confirm, and a name's newline and ESC reach the
question escaped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import RpcError

from .conftest import within
from .test_rewind import git, opened, rewind, run, tool

pytestmark = pytest.mark.e2e

SECRET = b"API_TOKEN=the-users-own-4f1c\n"
TRACKED = b"print('the project')\n"
COMMANDS = {
    "renamed": ("mv .env config.env", ["config.env"], []),
    "moved into a new folder": ("mkdir keep && mv .env keep/config", ["keep/config"], []),
    "copied then removed": ("cp .env x && rm .env", ["x"], []),
    "appended to a tracked file": ("cat .env >> tracked.py && rm .env", [], ["tracked.py"]),
}


@pytest.fixture
def env(env: dict[str, str]) -> dict[str, str]:
    """The e2e env with every XDG folder the daemon may read in the test's own."""
    home = Path(env["HOME"])
    return {
        **env,
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }


def users_repo(workdir: Path) -> None:
    git(workdir, "init", "-q")
    (workdir / ".gitignore").write_text(".env\n")
    (workdir / ".env").write_bytes(SECRET)
    (workdir / "tracked.py").write_bytes(TRACKED)


def holding(root: Path, needle: bytes) -> list[Path]:
    """The files under root whose bytes hold needle."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and ".git" not in path.parts:
            if needle in path.read_bytes():
                found.append(path)
    return found


def recovered_root(env: dict[str, str]) -> Path:
    return Path(env["XDG_STATE_HOME"]) / "elelem" / "recovered"


@pytest.mark.parametrize("case", list(COMMANDS))
async def test_undo_keeps_what_the_turn_moved_the_secret_into(
    spawn: Any, env: dict[str, str], workdir: Path, case: str
) -> None:
    command, deleted, restored = COMMANDS[case]
    users_repo(workdir)
    asked: list[dict[str, Any]] = []

    def answer(params: dict[str, Any]) -> str:
        asked.append(params)
        return "yes"

    client = await spawn(on_ask=answer)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    await run(client, session, tool("execute", command=command))
    assert not (workdir / ".env").exists()
    done = await within(client.command(session, "/undo"), 30)
    assert "rewound to before turn" in done["output"], done
    (question,) = asked
    plan = question["tool"]["plan"]["files"]
    moved = [*deleted, *restored]
    assert [e["path"] for e in plan["recovered"]] == moved
    assert plan["vanished"] == [".env"]
    for path in moved:
        assert f"{path} → recovered/" in question["prompt"]
    assert "may hold what the turn moved from .env" in question["prompt"]
    # undone: the tree as before the turn ...
    assert (workdir / "tracked.py").read_bytes() == TRACKED
    for path in deleted:
        assert not (workdir / path).exists()
    # ... and the secret's bytes still on disk, in the recovery folder
    (folder,) = recovered_root(env).iterdir()
    assert holding(folder, SECRET)
    assert folder.stat().st_mode & 0o077 == 0
    if restored:  # the turn's content of tracked.py, kept before the restore
        assert (folder / "tracked.py").read_bytes() == TRACKED + SECRET


@pytest.mark.parametrize("case", list(COMMANDS))
async def test_session_rewind_names_and_keeps_them_too(
    spawn: Any, env: dict[str, str], workdir: Path, case: str
) -> None:
    command, deleted, restored = COMMANDS[case]
    users_repo(workdir)
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    first = (await run(client, session, tool("execute", command=command)))["turnId"]
    plan = (await rewind(client, session, first, dryRun=True))["files"]
    folder = Path(plan["recovery"])
    assert folder.parent == recovered_root(env) and not folder.exists()  # a plan: nothing yet
    assert plan["recovered"] == [{"path": p, "to": str(folder / p)} for p in [*deleted, *restored]]
    done = (await rewind(client, session, first))["files"]
    assert done["recovered"] == plan["recovered"]
    assert holding(folder, SECRET)
    for entry in done["recovered"]:
        assert Path(entry["to"]).is_file()


async def test_nothing_is_kept_aside_when_nothing_left_out_vanished(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    users_repo(workdir)
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    first = (await run(client, session, tool("execute", command="cp .env x")))["turnId"]
    done = (await rewind(client, session, first))["files"]
    assert done["deleted"] == ["x"] and done["recovered"] == [] and done["recovery"] is None
    assert not recovered_root(env).exists()
    assert (workdir / ".env").read_bytes() == SECRET


async def test_a_file_edited_again_while_the_undo_question_is_open_is_asked_about_again(
    spawn: Any, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("one\n")
    asked: list[dict[str, Any]] = []

    def answer(params: dict[str, Any]) -> str:
        asked.append(params)
        if len(asked) == 1:  # the user edits a.txt again while the question is open
            (workdir / "a.txt").write_text("the user's, edited again\n")
            return "yes"
        return "no"

    client = await spawn(on_ask=answer)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    await run(client, session, tool("write", path="a.txt", content="two\n"))
    (workdir / "a.txt").write_text("the user's\n")
    done = await within(client.command(session, "/undo"), 30)
    assert len(asked) == 2, done
    assert all(q["tool"]["plan"]["files"]["outside"] == ["a.txt"] for q in asked)
    assert "not rewound" in done["output"]
    assert (workdir / "a.txt").read_text() == "the user's, edited again\n"


async def test_a_confirm_after_the_file_changed_again_is_refused_over_the_wire(
    spawn: Any, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("one\n")
    client = await opened(spawn)
    session = (await within(client.new_session()))["sessionId"]
    first = (await run(client, session, tool("write", path="a.txt", content="two\n")))["turnId"]
    (workdir / "a.txt").write_text("the user's\n")
    plan = await rewind(client, session, first, dryRun=True)
    assert plan["files"]["outside"] == ["a.txt"]
    (workdir / "a.txt").write_text("the user's, longer, edited again\n")
    with pytest.raises(RpcError) as caught:
        await rewind(client, session, first, confirm=["a.txt"])
    assert caught.value.kind == "outside_changes"
    assert (workdir / "a.txt").read_text() == "the user's, longer, edited again\n"
    done = await rewind(client, session, first, confirm=["a.txt"])  # that new plan, confirmed
    assert done["files"]["outside"] == ["a.txt"]
    assert (workdir / "a.txt").read_text() == "one\n"


async def test_the_undo_question_shows_a_names_newline_and_escape_escaped(
    spawn: Any, workdir: Path
) -> None:
    asked: list[dict[str, Any]] = []

    def answer(params: dict[str, Any]) -> str:
        asked.append(params)
        return "no"

    client = await spawn(on_ask=answer)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    name = "evil\n\x1b[2Jname.txt"
    await run(client, session, tool("write", path=name, content="x\n"))
    await within(client.command(session, "/undo"), 30)
    (question,) = asked
    assert "\x1b" not in question["prompt"]
    assert "evil\\n\\x1b[2Jname.txt" in question["prompt"]
    assert question["tool"]["plan"]["files"]["deleted"] == [name]  # the data stays exact
