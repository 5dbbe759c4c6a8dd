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
