"""`elelem chat --resume [ID]` and `elelem sessions`, driven as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        env[name] = str(tmp_path / name.lower())
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


def elelem(env, cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elelem_daemon", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


def stored(env) -> list[dict]:
    folder = Path(env["XDG_STATE_HOME"]) / "elelem" / "sessions"
    return [json.loads(line) for path in folder.glob("*.jsonl") for line in path.open()]


def test_resume_continues_the_latest_conversation_in_this_folder(env, project):
    first = elelem(env, project, "chat", stdin="!echo remember the word kumquat\n")
    assert first.returncode == 0, first.stderr
    listing = elelem(env, project, "sessions", "--json")
    (entry,) = [json.loads(line) for line in listing.stdout.splitlines()]
    assert entry["title"] == "!echo remember the word kumquat" and entry["cwd"] == str(project)

    again = elelem(env, project, "chat", "--resume", stdin="!echo and now?\n/context\n")
    assert again.returncode == 0, again.stderr
    out = again.stdout
    assert f"resumed session {entry['sessionId'][:8]}: !echo remember" in out
    assert "> !echo remember the word kumquat\nremember the word kumquat\n" in out  # redrawn
    assert "  2. user: !echo remember the word kumquat" in out  # the model sees it again
    assert "  5. assistant: and now?" in out
    messages = [(r["role"], r["content"]) for r in stored(env) if r["type"] == "message"]
    assert messages == [
        ("user", "!echo remember the word kumquat"),
        ("assistant", "remember the word kumquat"),
        ("user", "!echo and now?"),
        ("assistant", "and now?"),
    ]
    assert len(list(Path(env["XDG_STATE_HOME"]).rglob("*.jsonl"))) == 1


def test_resume_by_id_prefix_from_anywhere_uses_the_sessions_folder(env, project, tmp_path):
    elelem(env, project, "chat", stdin="!echo one\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    session_id = json.loads(elelem(env, project, "sessions", "--json").stdout)["sessionId"]
    Path(project / "note.txt").write_text("in the project")
    run = elelem(
        env,
        elsewhere,
        "chat",
        "--resume",
        session_id[:6],
        stdin='!tool read {"path":"note.txt"}\n',
    )
    assert run.returncode == 0, run.stderr
    assert "done." in run.stdout and "not found" not in run.stdout
    missing = elelem(env, elsewhere, "chat", "--resume", stdin="")
    assert missing.returncode == 1
    assert (
        missing.stderr.strip() == f"elelem: no stored session in {elsewhere}; see `elelem sessions`"
    )
    bad = elelem(env, elsewhere, "chat", "--resume", "../x", stdin="")
    assert (bad.returncode, bad.stderr.strip()) == (1, "elelem: invalid session id: '../x'")
    unknown = elelem(env, elsewhere, "chat", "--resume", "abcdef", stdin="")
    assert (unknown.returncode, unknown.stderr.strip()) == (
        1,
        "elelem: no stored session 'abcdef'",
    )


def test_sessions_lists_filters_and_deletes(env, project, tmp_path):
    assert elelem(env, project, "sessions").stdout == "no stored sessions\n"
    elelem(env, project, "ask", "!echo asked here")
    other = tmp_path / "other"
    other.mkdir()
    elelem(env, other, "chat", stdin="!echo chatted there\n")
    rows = elelem(env, project, "sessions").stdout.splitlines()
    assert len(rows) == 2 and rows[0].endswith("!echo chatted there")
    assert str(other) in rows[0] and rows[1].endswith("!echo asked here")
    here = elelem(env, project, "sessions", "--here").stdout.splitlines()
    assert len(here) == 1 and here[0].endswith("!echo asked here")
    short = here[0].split()[0]
    deleted = elelem(env, project, "sessions", "--delete", short)
    assert deleted.returncode == 0 and deleted.stdout.startswith(f"deleted {short}")
    assert len(elelem(env, project, "sessions").stdout.splitlines()) == 1
    again = elelem(env, project, "sessions", "--delete", short)
    assert (again.returncode, again.stderr.strip()) == (1, f"elelem: no stored session {short!r}")


def test_no_save_stores_nothing(env, project):
    assert elelem(env, project, "chat", "--no-save", stdin="!echo hi\n").returncode == 0
    assert elelem(env, project, "ask", "--no-save", "!echo hi").returncode == 0
    assert elelem(env, project, "sessions").stdout == "no stored sessions\n"


def test_pick_lists_every_session_numbered_and_resumes_the_choice(env, project, tmp_path):
    elelem(env, project, "ask", "!echo first")
    other = tmp_path / "other"
    other.mkdir()
    elelem(env, other, "ask", "!echo second")
    run = elelem(env, project, "chat", "--pick", stdin="2\n/context\n")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("1  ") and lines[0].endswith("!echo second")
    assert lines[1].startswith("2  ") and lines[1].endswith("!echo first")
    assert lines[2] == "resume which? [1-2 or an id] 2"
    assert "  2. user: !echo first" in run.stdout
    by_id = elelem(env, project, "chat", "--pick", stdin=f"{lines[0].split()[1]}\n/context\n")
    assert "  2. user: !echo second" in by_id.stdout
    for answer, error in (
        ("", "no session picked"),
        ("9", "no session number 9: pick 1-2 or an id"),
        ("zzzz", "no stored session 'zzzz'"),
    ):
        bad = elelem(env, project, "chat", "--pick", stdin=f"{answer}\n")
        assert (bad.returncode, bad.stderr.strip()) == (1, f"elelem: {error}")


def test_resume_redraws_the_tool_calls_and_their_failures(env, project):
    (project / "notes.txt").write_text("kept\n")
    first = elelem(
        env,
        project,
        "chat",
        stdin='!tool read {"path": "notes.txt"}\n!tool read {"path": "missing.txt"}\n',
    )
    assert first.returncode == 0, first.stderr
    again = elelem(env, project, "chat", "--resume", stdin="")
    assert again.returncode == 0, again.stderr
    redrawn = again.stdout.split("resumed session", 1)[1]
    read, failed = "+ read(notes.txt)\n  kept\n  ✓\n", "+ read(missing.txt)\n  ✗ not found\n"
    assert (
        '> !tool read {"path": "notes.txt"}\n'
        f"{read}"
        "done.\n"  # the kept reply: the last round's text
        '> !tool read {"path": "missing.txt"}\n'
        f"{failed}"
        "done.\n"
    ) in redrawn
    assert read in first.stdout and failed in first.stdout  # drawn as they were live


def test_a_chat_nobody_talked_to_leaves_no_session(env, project):
    quiet = elelem(env, project, "chat", stdin="/context\n")
    assert quiet.returncode == 0, quiet.stderr
    assert stored(env) == [] and "no stored sessions" in elelem(env, project, "sessions").stdout


def test_sessions_delete_takes_the_checkpoints_and_resume_can_rewind(env, project):
    write = '!tool write {"path": "made.txt", "content": "x"}'
    assert elelem(env, project, "chat", stdin=write + "\n").returncode == 0
    assert (project / "made.txt").exists()
    resumed = elelem(env, project, "chat", "--resume", stdin="/rewind\n")
    assert "(1 file)" in resumed.stdout, resumed.stdout  # its checkpoint, after a restart
    root = Path(env["XDG_STATE_HOME"]) / "elelem" / "checkpoints"
    (shadow,) = [p for p in root.iterdir() if (p / "cwd").is_file()]

    def refs() -> str:
        return subprocess.run(
            ["git", "--git-dir", str(shadow), "for-each-ref"], capture_output=True, text=True
        ).stdout

    entry = stored(env)[0]  # the metadata line
    assert entry["type"] == "session" and f"/{entry['id']}/" in refs()
    assert elelem(env, project, "sessions", "--delete", entry["id"][:8]).returncode == 0
    assert f"/{entry['id']}/" not in refs()


def test_resume_redraws_the_turns_before_a_compaction_and_marks_it(env, project):
    first = elelem(env, project, "chat", stdin="!echo before the summary\n/compact\n!echo after\n")
    assert first.returncode == 0, first.stderr
    again = elelem(env, project, "chat", "--resume", stdin="")
    assert again.returncode == 0, again.stderr
    out = again.stdout
    before = out.index("> !echo before the summary")  # the user still sees the first turn
    marker = out.index("context compacted here")
    assert before < marker < out.index("> !echo after")
