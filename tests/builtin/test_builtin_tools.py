import asyncio
import time
import uuid

import pytest
from support.processes import alive

from elelem_daemon.builtins import search

NAP = f"30.{uuid.uuid4().int % 10**9}"  # a sleep no other process on the machine runs


@pytest.fixture(autouse=True)
def execute_allowed(isolated_home):
    """These tests are about the tools: the permission policy (tested in
    test_permissions.py) would ask before each `execute`, so allow it here."""
    rules = isolated_home / ".config" / "elelem" / "permissions"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text("execute allow\n")


async def run(session, name, **args):
    return (await session.toolbox.run(name, args)).to_dict()


async def test_tool_order_puts_read_first(session):
    assert session.toolbox.names()[:4] == ["read", "write", "edit", "execute"]


async def test_read_and_open(session):
    assert await run(session, "read", path="README.md") == {
        "content": "# My project\n",
        "path": "README.md",
        "ok": True,
    }
    assert (await run(session, "open", path="README.md"))["ok"]
    assert await run(session, "read", path="missing.md") == {
        "error": "not found",
        "path": "missing.md",
        "ok": False,
    }


async def test_write_creates_parent_folders(session, workdir):
    assert await run(session, "write", path="a/b/c.txt", content="héllo") == {
        "bytes": 6,
        "path": "a/b/c.txt",
        "diff": "--- /dev/null\n+++ a/b/c.txt\n@@ -0,0 +1 @@\n+héllo\n"
        "\\ No newline at end of file\n",
        "ok": True,
    }
    assert (workdir / "a/b/c.txt").read_text() == "héllo"


async def test_edit_replaces_exactly_one_occurrence(session, workdir):
    (workdir / "f.txt").write_text("one two two\n")
    result = await run(session, "edit", path="f.txt", old="one", new="1")
    assert result["ok"] and (workdir / "f.txt").read_text() == "1 two two\n"
    result = await run(session, "edit", path="f.txt", old="two", new="2")
    assert result["error"] == "text occurs 2 times; include more context so it occurs once"
    assert (await run(session, "edit", path="f.txt", old="zzz", new="2"))["error"] == (
        "text not found"
    )


async def test_execute_runs_in_the_session_cwd(session, workdir):
    result = await run(session, "bash", command="pwd; echo err >&2; exit 3")
    assert result == {"exit_status": 3, "content": f"{workdir}\nerr\n", "ok": True}


async def test_execute_hides_api_keys(session, monkeypatch):
    monkeypatch.setenv("SOME_API_KEY", "canary-123")
    result = await run(session, "execute", command="env")
    assert "canary-123" not in result["content"]


async def test_execute_times_out_and_kills_the_group(session):
    result = await run(session, "execute", command=f"sleep {NAP} & sleep {NAP}", timeout=0.3)
    assert result["error"] == "timed out after 0.3s" and result["ok"] is False
    await asyncio.sleep(0.1)
    assert not sleeping()


async def test_execute_caps_output_with_a_visible_marker(session, monkeypatch):
    monkeypatch.setattr("elelem_daemon.builtins.shell.OUTPUT_CAP", 100)
    result = await session.toolbox.run("execute", {"command": "seq 1 10000"})
    content = result.payload["content"]
    assert content.startswith("1\n2\n") and content.endswith("9999\n10000\n")
    assert "\n[... 48794 bytes truncated ...]\n" in content


async def test_capped_keeps_head_and_tail():
    from elelem_daemon.builtins.shell import Capped

    capped = Capped(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrstuvwxyz"):
        capped.add(chunk)
    assert capped.text() == "abcde\n[... 16 bytes truncated ...]\nvwxyz"


async def test_cancelling_a_running_command_kills_it(session):
    task = asyncio.create_task(run(session, "execute", command=f"sleep {NAP}"))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 2
    while sleeping() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not sleeping()


def sleeping() -> bool:
    """Is a `sleep NAP` started by this test still alive? (NAP is unique to this run.)"""
    return alive(["sleep", NAP])


async def test_glob_grep_and_list(session, workdir):
    (workdir / "src").mkdir()
    (workdir / "src" / "app.py").write_text("def main():\n    return 1\n")
    assert (await run(session, "glob", pattern="**/*.py"))["content"] == "src/app.py"
    grep = await run(session, "grep", pattern="return", glob="*.py")
    assert "src/app.py:2:    return 1" in grep["content"]
    listing = await run(session, "ls", path="src")
    assert "app.py" in listing["content"] and listing["exit_status"] == 0


async def test_pure_python_grep_matches_ripgrep_format(session, workdir, monkeypatch):
    monkeypatch.setattr(search.shutil, "which", lambda name: None)  # the pure-Python path
    (workdir / "bin.dat").write_bytes(b"\xff\xfe project")
    (workdir / "nul.dat").write_bytes(b"project\0")
    grep = await run(session, "grep", pattern="project")
    assert grep == {"exit_status": 0, "content": "README.md:1:# My project", "ok": True}
    assert (await run(session, "grep", pattern="("))["error"].startswith("invalid pattern: ")


async def test_interview_asks_the_input(workdir):
    from elelem_daemon.io import NullInput
    from elelem_daemon.plugins import core_registry
    from elelem_daemon.session import start

    session = start(core_registry(entry_points=False), cwd=workdir, input=NullInput(["yes", None]))
    assert await run(session, "interview", question="ok?") == {"answer": "yes", "ok": True}
    assert (await run(session, "interview", question="ok?"))["error"] == "the user gave no answer"


async def test_quick_commands_never_fail_on_their_closed_output(session):
    results = [await run(session, "execute", command="true") for _ in range(30)]
    assert all(r == {"exit_status": 0, "content": "", "ok": True} for r in results)
