"""Cancel windows: a cancel placed exactly where a turn's task is (by futures the test
holds, never by sleeping) ends the task there. A cancel lost in any of these would let
a turn's tools run on after the user's stop (tests/faults/test_tools.py's hanging
handler then never returned: the cancel came as the first checkpoint's `git version`
answered, and 3.11's `asyncio.wait_for` swallowed it).

Python 3.11's `wait_for`, cancelled in the loop iteration where what it waits for
completes, returns that result and drops the cancel (fixed in 3.12, where it is
`asyncio.timeout`). So the package uses `asyncio.timeout` everywhere: checked below.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.checkpoints import git
from elelem_daemon.control.live import Live
from elelem_daemon.jsonrpc.client import Client
from elelem_daemon.jsonrpc.framing import encode
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

from .conftest import plugin, within

PACKAGE = Path(__file__).resolve().parents[2] / "elelem_daemon"


class Answering:
    """A process whose `communicate` answers when the test sets `answer`."""

    pid = 2**22 + 1  # no such process: a kill of it finds nothing
    returncode = 0

    def __init__(self) -> None:
        self.answer: asyncio.Future[tuple[bytes, bytes]] = (
            asyncio.get_running_loop().create_future()
        )
        self.asked = asyncio.Event()

    async def communicate(self, input: bytes | None = None) -> tuple[bytes, bytes]:
        self.asked.set()
        return await self.answer

    async def wait(self) -> int:
        return 0


async def test_a_cancel_as_git_tells_its_version_is_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first checkpoint of a process looks for git (`find_git`): a turn cancelled
    in the very iteration `git version` answers is cancelled, not carried on."""
    exe = tmp_path / "git"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    proc = Answering()

    async def spawn(*args: Any, **kwargs: Any) -> Answering:
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spawn)
    task = asyncio.ensure_future(git.find_git(str(tmp_path)))  # a PATH of its own: not cached
    await asyncio.wait_for(proc.asked.wait(), 10)
    proc.answer.set_result((b"git version 2.43.0\n", b""))
    task.cancel()  # the same iteration: git's answer and the user's stop
    with pytest.raises(asyncio.CancelledError):
        found = await task
        raise AssertionError(f"the cancel was lost: find_git answered {found!r}")
    assert str(tmp_path) not in git._found  # nothing decided: the next turn looks again


WINDOWS = ["turn_start", "before", "handler", "returned", "after"]


@pytest.mark.parametrize("window", WINDOWS)
async def test_a_cancel_in_each_window_of_a_tool_call_ends_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: str
) -> None:
    """The turn's task, cancelled where it stands: in a `turn_start` hook, a `before`
    hook, the handler, the very iteration the handler returns, an `after` hook. Each
    ends the turn `cancelled`; nothing after the window runs."""
    monkeypatch.setenv("ELELEM_CHECKPOINTS", "0")  # their own windows: the test above
    reached, never = asyncio.Event(), asyncio.Event()
    answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    ran: list[str] = []

    async def at(name: str) -> None:
        ran.append(name)
        if name == window:
            reached.set()
            await never.wait()

    registry = core_registry(entry_points=False).child()
    probe = registry.plugin("windows")

    @probe.on("turn_start")
    async def started(session: Any, turn: int) -> None:
        await at("turn_start")

    @probe.before("probe")
    async def before(session: Any, args: dict[str, Any]) -> None:
        await at("before")

    @probe.tool("probe", "waits where the test says")
    async def handler(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        await at("handler")
        if window == "returned":
            reached.set()
            return await answer
        return {"ok": True}

    @probe.after("probe")
    async def after(session: Any, args: dict[str, Any], value: Any) -> None:
        await at("after")

    session = start(registry, "stub", cwd=tmp_path, plugin_files=False)
    live = Live(session)
    turn = asyncio.ensure_future(live.turn("!tool probe {}"))
    async with asyncio.timeout(30):
        await reached.wait()
    if window == "returned":
        answer.set_result({"ok": True})  # the same iteration: the tool's answer, the stop
    live.cancel()
    async with asyncio.timeout(30):  # a lost cancel: the stub would answer `done.`
        result = await turn
    assert result.stop_reason == "cancelled"
    steps = [w for w in WINDOWS if w != "returned"]  # where each hook says it ran
    assert ran == steps[: steps.index(window) + 1 if window in steps else 3]
    assert not live.busy
    await session.close()


HANGS = """
import asyncio


def register(plugin):
    @plugin.tool("stuck", "never returns", {})
    async def stuck(session, args):
        await asyncio.sleep(3600)
"""


async def test_a_cancel_right_behind_its_turn_in_one_write_ends_it(
    client: Client, workdir: Path
) -> None:
    """`session/turn` and `session/cancel` in one write: the daemon reads both before
    the turn's task has run; the cancel still finds it (protocol.py lets each handler
    start before the next message)."""
    plugin(workdir, "hangs", HANGS)
    sid = (await within(client.new_session(cwd=str(workdir), trusted=True)))["sessionId"]
    for text in ["!tool stuck {}", "!stream 100000 50"]:  # a tool, then the provider
        msg_id, future, message = client._start("session/turn", {"sessionId": sid, "text": text})
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
        await client.write_raw(encode(message) + encode(cancel))
        reply = await within(future, 30)
        assert reply["stopReason"] == "cancelled", text
    still = await within(client.turn(sid, "!echo still here"))
    assert (still["reply"], still["stopReason"]) == ("still here", "end_turn")


def wait_fors(path: Path) -> list[int]:
    """The lines of `path` that call `asyncio.wait_for`."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "wait_for"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "asyncio"
    ]


def test_the_package_never_uses_wait_for() -> None:
    """`asyncio.timeout` instead: `wait_for` (3.11) loses a cancel that comes as what
    it waits for ends, `wait_for(shield(x))` included."""
    found = {
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in wait_fors(path)
    }
    assert found == set()


def test_the_check_finds_a_wait_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import asyncio\nasync def f(x):\n    await asyncio.wait_for(x, 1)\n")
    assert wait_fors(sample) == [3]


@pytest.mark.parametrize("prompt", ["!echo over", "!tool stop_me {}"])
async def test_a_cancel_while_the_end_hooks_run_leaves_the_turns_result_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prompt: str
) -> None:
    """A stop that comes while `turn_end` hooks run (the end checkpoint, say) cuts them
    short, but the turn was over: its result is what the conversation kept, never
    "cancelled, nothing kept". A turn cancelled before, and cancelled again there,
    keeps its own cancelled result."""
    monkeypatch.setenv("ELELEM_CHECKPOINTS", "0")
    reached, never, stopped = asyncio.Event(), asyncio.Event(), asyncio.Event()
    registry = core_registry(entry_points=False).child()
    probe = registry.plugin("late")

    @probe.tool("stop_me", "waits for the user's stop")
    async def stop_me(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        stopped.set()
        await never.wait()
        return {"ok": True}

    @probe.on("turn_end")
    async def ended(session: Any, turn: int, result: Any) -> None:
        reached.set()
        await never.wait()

    session = start(registry, "stub", cwd=tmp_path, plugin_files=False)
    live = Live(session)
    turn = asyncio.ensure_future(live.turn(prompt))
    if prompt.startswith("!tool"):
        async with asyncio.timeout(30):
            await stopped.wait()
        live.cancel()  # the turn is cancelled; its end hooks start
    async with asyncio.timeout(30):
        await reached.wait()
    live.cancel()  # and now a stop during those hooks
    async with asyncio.timeout(30):
        result = await turn
    if prompt.startswith("!echo"):
        assert (result.reply, result.stop_reason) == ("over", "end_turn")
    else:
        assert result.stop_reason == "cancelled" and result.kept
    assert session.conversation.last["content"] == result.reply
    assert not live.busy
    await session.close()
