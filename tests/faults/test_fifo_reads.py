"""No file read can freeze a face (issue 36): a FIFO where a repository's file should
be (`.git/HEAD`, where a `.git` file's `gitdir:` points) is no branch, never a wait;
`elelem ask` there answers, the daemon answers `session/list` while a session there
opens, and SIGTERM ends an `ask` stuck early (its piped prompt never closed)."""

from __future__ import annotations

import asyncio
import os
import platform
import signal
import sys
from pathlib import Path

import pytest

from elelem_daemon.jsonrpc.client import Client

from .conftest import within

pytestmark = pytest.mark.e2e

BOUND = 5.0  # seconds: the issue's own bound


@pytest.fixture
def env(env: dict[str, str]) -> dict[str, str]:
    """The e2e env with every XDG folder the process may read in the test's own."""
    home = Path(env["HOME"])
    return {
        **env,
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }


def fifo_head(workdir: Path) -> None:
    (workdir / ".git").mkdir()
    os.mkfifo(workdir / ".git" / "HEAD")


def fifo_via_gitdir(workdir: Path) -> None:
    real = workdir.parent / "real.git"
    real.mkdir()
    os.mkfifo(real / "HEAD")
    (workdir / ".git").write_text("gitdir: ../real.git\n")


async def ask(env: dict[str, str], cwd: Path, *words: str, stdin: int | None = None):
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "ask", "--provider", "stub", *words,
        stdin=asyncio.subprocess.DEVNULL if stdin is None else stdin,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd,
    )  # fmt: skip


@pytest.mark.parametrize("plant", [fifo_head, fifo_via_gitdir])
async def test_elelem_ask_answers_in_a_folder_whose_head_is_a_fifo(
    env: dict[str, str], workdir: Path, plant
) -> None:
    plant(workdir)
    process = await ask(env, workdir, "hello")
    try:
        out, err = await asyncio.wait_for(process.communicate(), BOUND)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode(errors="replace")
    assert out.strip(), err.decode(errors="replace")


async def test_the_daemon_answers_session_list_while_a_session_in_such_a_folder_opens(
    spawn, workdir: Path, env: dict[str, str]
) -> None:
    fifo_head(workdir)
    client: Client = await spawn()
    await within(client.initialize())
    opening = asyncio.ensure_future(client.new_session(cwd=str(workdir)))
    listed = await within(client.list_sessions(), BOUND)
    assert isinstance(listed, list)
    session = (await within(opening, BOUND))["sessionId"]
    reply = await within(client.turn(session, "hello"), 20)
    assert reply is not None
    # still answering: the environment's branch is read again before every prompt
    assert isinstance(await within(client.list_sessions(), BOUND), list)


READ = {"x86_64": "0", "aarch64": "63"}  # the read(2) syscall's number


async def reading_stdin(pid: int, seconds: float = 20.0) -> None:
    """Until one of the process's threads waits in read(2) on fd 0
    (/proc/PID/task/TID/syscall)."""
    number = READ.get(platform.machine())
    assert number is not None, f"no read(2) number known for {platform.machine()}"
    for _ in range(int(seconds / 0.02)):
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                fields = (task / "syscall").read_text().split()
            except OSError:
                continue
            if fields[:2] == [number, "0x0"]:
                return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{pid} never read its stdin")


async def test_sigterm_ends_an_elelem_ask_stuck_reading_its_piped_prompt(
    env: dict[str, str], workdir: Path
) -> None:
    read, write = os.pipe()  # a writer that never closes: the prompt never ends
    try:
        process = await ask(env, workdir, "hello", stdin=read)
        os.close(read)
        try:
            await reading_stdin(process.pid)
            await asyncio.sleep(0.2)  # past any start-up handler: the face's own hold now
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), BOUND)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        assert process.returncode == 128 + signal.SIGTERM
    finally:
        os.close(write)


async def test_a_fifo_an_approved_command_makes_at_head_mid_session_freezes_nothing(
    spawn, workdir: Path, env: dict[str, str]
) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=workdir, check=True)
    client: Client = await spawn()
    await within(client.initialize())
    session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
    command = "rm .git/HEAD && mkfifo .git/HEAD && echo planted"
    done = await within(client.turn(session, f'!tool execute {{"command": "{command}"}}'))
    assert done["stopReason"] == "end_turn", done
    assert (workdir / ".git" / "HEAD").is_fifo()
    # the next prompt reads the branch again (the environment's changes): no wait
    done = await within(client.turn(session, "hello"), 20)
    assert done["stopReason"] == "end_turn", done
    assert isinstance(await within(client.list_sessions(), BOUND), list)
