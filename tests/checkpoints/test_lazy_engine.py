"""The checkpoints engine loads only when a session needs it (builtins/checkpoints.py):
a turn that only talks, reads or searches is marked running in its folder with
`checkpoints.running` alone, the same `Running` the folder's engine uses, so a rewind
is refused under it as under any turn, and rewinds work the same once the engine loads."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.checkpointing import allow

from elelem_daemon.base.errors import SessionBusy
from elelem_daemon.checkpoints import close_all
from elelem_daemon.checkpoints.running import of_folder
from elelem_daemon.control.rewind import rewind
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import Session, start

ENGINE = ("elelem_daemon.checkpoints.checkpoints", "elelem_daemon.checkpoints.shadow")


@pytest.fixture(autouse=True)
def allowed(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allow(isolated_home, monkeypatch, "execute allow\nwrite allow\nedit allow\n")


@pytest.fixture(autouse=True)
async def closed():
    yield
    await close_all()


@pytest.fixture(scope="module")
def registry():
    return core_registry(entry_points=False)


def opened(registry: Any, cwd: Path) -> Session:
    return start(registry, "stub", cwd=cwd, plugin_files=False)


def tool(name: str, **arguments: Any) -> str:
    return f"!tool {name} {json.dumps(arguments)}"


async def test_a_talking_turn_marks_the_folder_without_the_engine(registry, workdir) -> None:
    writer, talker = opened(registry, workdir), opened(registry, workdir)
    result = await writer.turn(tool("write", path="y.txt", content="y"))
    assert result.reply == "done.", result
    theirs = writer.turns
    talking = asyncio.ensure_future(talker.turn("!stream 3000 10"))  # 30 s of words
    for _ in range(500):
        if talker.turn_id is not None:
            break
        await asyncio.sleep(0.01)
    assert talker.checkpoints._engine is None  # the turn was marked all the same
    assert talker.checkpoints.turns is writer.checkpoints.engine.turns
    with pytest.raises(SessionBusy) as caught:
        await rewind(writer, theirs)
    assert caught.value.data == {"sessionId": talker.id}
    talking.cancel()
    await asyncio.wait([talking], timeout=10)
    assert talking.done() and talker.turn_id is None
    assert talker.checkpoints.running() is None and writer.checkpoints.running() is None
    done = await rewind(writer, theirs)
    assert done.files is not None and done.files["deleted"] == ["y.txt"]


async def test_a_rewind_after_talking_turns_loads_the_engine_and_works(registry, workdir) -> None:
    session = opened(registry, workdir)
    assert (await session.turn("!echo hi")).reply == "hi"
    assert (await session.turn(tool("read", path="missing.txt"))).reply == "done."
    assert session.checkpoints._engine is None
    first = session.turns + 1
    assert (await session.turn(tool("write", path="a.txt", content="one"))).reply == "done."
    assert (await session.turn("!echo more")).reply == "more"
    done = await rewind(session, first)
    assert done.files is not None and done.files["deleted"] == ["a.txt"]
    assert not (workdir / "a.txt").exists() and len(session.conversation) == 4
    assert (await rewind(session, 1)).files is not None  # before the talk: nothing to undo
    assert len(session.conversation) == 0


def test_the_folder_has_one_running_per_settings(workdir) -> None:
    from elelem_daemon.checkpoints import for_cwd
    from elelem_daemon.checkpoints.settings import Settings

    settings = Settings.from_env()
    turns = of_folder(settings, workdir.resolve())
    assert of_folder(Settings.from_env(), workdir.resolve()) is turns
    assert for_cwd(workdir, settings).turns is turns
    assert turns.lock_file == for_cwd(workdir, settings).folder.with_suffix(".turns")
    off = Settings(enabled=False, root=settings.root)
    assert of_folder(off, workdir.resolve()) is not turns and not of_folder(off, workdir).shared


SCRIPT = """
import asyncio, json, sys
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

async def main():
    session = start(core_registry(), "stub", cwd=sys.argv[1], plugin_files=False)
    engine = {engine!r}
    seen = []
    for prompt in sys.argv[2:]:
        result = await session.turn(prompt)
        seen.append([result.reply, any(name in sys.modules for name in engine)])
    await session.close()
    print(json.dumps(seen))

asyncio.run(main())
"""


def test_only_a_turn_that_may_change_files_imports_the_engine(workdir) -> None:
    prompts = ["!echo hi", tool("read", path="missing.txt"), tool("write", path="b", content="")]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(engine=ENGINE), str(workdir), *prompts],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ELELEM_PROVIDER": "stub"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["hi", False], ["done.", False], ["done.", True]]


def test_elelem_ask_with_a_question_does_not_import_the_engine(workdir) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "elelem_daemon", "ask", "!echo hi"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=workdir,
        env={**os.environ, "ELELEM_PROVIDER": "stub"},
    )
    assert done.returncode == 0 and done.stdout == "hi\n", done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert "elelem_daemon.checkpoints.running" in imported  # the turn was marked
    assert not imported & set(ENGINE)
