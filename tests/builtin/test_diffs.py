"""write and edit results carry a unified diff of what changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_daemon.builtins.files import DIFF_CAP, unified
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    (tmp_path / "p").mkdir()
    return start(core_registry(entry_points=False), cwd=tmp_path / "p", plugin_files=False)


async def test_write_a_new_file_diffs_from_dev_null(session):
    result = await session.toolbox.run("write", {"path": "new.txt", "content": "a\nb\n"})
    assert result.to_dict() == {
        "bytes": 4,
        "path": "new.txt",
        "diff": "--- /dev/null\n+++ new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n",
        "ok": True,
    }


async def test_write_over_a_file_diffs_old_against_new(session):
    (session.cwd / "f.txt").write_text("one\ntwo\nthree\n")
    result = await session.toolbox.run("write", {"path": "f.txt", "content": "one\n2\nthree\n"})
    assert result.payload["diff"] == (
        "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    )
    same = await session.toolbox.run("write", {"path": "f.txt", "content": "one\n2\nthree\n"})
    assert same.ok and same.payload["diff"] == ""


async def test_edit_diffs_the_one_replacement(session):
    (session.cwd / "f.py").write_text("x = 1\ny = 2\n")
    result = await session.toolbox.run("edit", {"path": "f.py", "old": "y = 2", "new": "y = 3"})
    assert result.to_dict() == {
        "bytes": 12,
        "path": "f.py",
        "replaced": "y = 2",
        "with": "y = 3",
        "diff": "--- f.py\n+++ f.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n",
        "ok": True,
    }
    missing = await session.toolbox.run("edit", {"path": "f.py", "old": "zzz", "new": ""})
    assert missing.to_dict() == {"error": "text not found", "path": "f.py", "ok": False}


def test_a_missing_final_newline_is_marked_as_git_does():
    assert unified("a", "b", "f") == (
        "--- f\n+++ f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n"
        "+b\n\\ No newline at end of file\n"
    )


def test_a_huge_diff_is_capped_with_a_marker():
    text = unified(None, "x\n" * DIFF_CAP, "big")
    whole = len(f"--- /dev/null\n+++ big\n@@ -0,0 +1,{DIFF_CAP} @@\n") + 3 * DIFF_CAP
    assert text.startswith("--- /dev/null\n+++ big\n@@ ")
    kept = DIFF_CAP - (DIFF_CAP - 42) % 3  # whole "+x\n" lines after the 42-character header
    assert text.endswith(f"+x\n[... diff truncated: {whole - kept} more characters]\n")
    assert len(text) <= DIFF_CAP + 50
