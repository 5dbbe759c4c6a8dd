"""A skill in every face, as the user meets it: listed by `/skills` and read by the
model (the stub scripts the call) in the terminal, the daemon and the ACP face; an
untrusted folder's skill is not listed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.ndjson import Wire

from elelem_daemon.jsonrpc.client import Client

pytestmark = pytest.mark.e2e
READ = '!tool skill {"name": "release-notes"}'
BODY = "Run `git log --oneline` since the last tag."


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home, project = tmp_path / "home", tmp_path / "project"
    where = project / ".agents" / "skills" / "release-notes"
    where.mkdir(parents=True)
    (where / "SKILL.md").write_text(
        f"---\nname: release-notes\ndescription: Write release notes\n---\n{BODY}\n"
    )
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        ELELEM_PROVIDER="stub",
    )
    return project, env


def trust(project: Path, env: dict[str, str]) -> None:
    """`elelem trust`: elelem's own write (a hand-written entry is held: issue 36)."""
    subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "trust", str(project)],
        check=True, capture_output=True, timeout=60, env=env,
    )  # fmt: skip


def chat(project: Path, env: dict[str, str], lines: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "chat", "-"],
        input=lines, capture_output=True, text=True, timeout=60, cwd=project, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_terminal_lists_and_reads_a_trusted_folders_skill(folders) -> None:
    project, env = folders
    untrusted = chat(project, env, "/skills\n")
    assert "release-notes (project)" not in untrusted and "not trusted" in untrusted
    trust(project, env)
    shown = chat(project, env, f"/skills\n{READ}\n")
    assert "- release-notes (project): Write release notes" in shown
    assert BODY in shown  # the tool's result, as the terminal shows it


async def test_the_daemon_lists_and_reads_a_skill(folders) -> None:
    project, env = folders
    async with await Client.spawn("--provider", "stub", env=env, cwd=str(project)) as client:
        await client.initialize()
        untrusted = (await client.new_session(trusted=False))["sessionId"]
        said = await client.command(untrusted, "/skills")
        assert "release-notes (project)" not in said["output"]
        sid = (await client.new_session(trusted=True))["sessionId"]
        listed = await client.command(sid, "/skills")
        assert "release-notes (project): Write release notes" in listed["output"]
        seen: list[dict] = []
        await asyncio.wait_for(client.turn(sid, READ, on_event=seen.append), 30)
        done = next(e["params"] for e in seen if e["method"] == "event/result")
        assert done["ok"] and BODY in done["result"]["content"]


async def test_the_acp_face_lists_and_reads_a_skill(folders) -> None:
    project, env = folders
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "daemon", "--acp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=project,
    )  # fmt: skip
    wire = Wire(process)
    try:
        new = {"cwd": str(project), "mcpServers": [], "_meta": {"elelem": {"trusted": True}}}
        sid = (await wire.call(1, "session/new", new))["result"]["sessionId"]

        async def said(ident: int, text: str) -> str:
            mark = len(wire.seen)
            prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
            assert "result" in await wire.call(ident, "session/prompt", prompt)
            return json.dumps(wire.seen[mark:])

        assert "release-notes (project): Write release notes" in await said(2, "/skills")
        assert BODY.replace("`", "") in (await said(3, READ)).replace("`", "")
    finally:
        process.kill()
        await process.wait()
