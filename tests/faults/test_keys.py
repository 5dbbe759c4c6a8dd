"""Keys stay in the daemon (issue 13, item 1). A hostile scripted model goes after the
keys every way a tool allows: `/proc/*/environ` of the daemon by every path spelling
(`read`, `grep`, `glob`, `list`), a symlink into /proc, `execute` reading its parent's
and the daemon's environment from a child and a grandchild, and reading outside the
folder (`~/.ssh/id_rsa`). None of it yields a key; the keys still reach the provider
(in its header, never in a body), also after `/provider` switches later."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from providers.replay import ReplayServer

from elelem_daemon.jsonrpc.client import Client

from .conftest import Tap, stored, within
from .replies import calls, text_stream

pytestmark = pytest.mark.e2e

CANARY = "canary-keys-Vt93Kq"
SECRETS = {
    "OPENAI_API_KEY": f"sk-{CANARY}-openai",
    "ANTHROPIC_API_KEY": f"sk-{CANARY}-anthropic",
    "GITHUB_TOKEN": f"ghp_{CANARY}",
    "AWS_ACCESS_KEY_ID": f"AKIA{CANARY}",
    "AWS_SECRET_ACCESS_KEY": f"aws-{CANARY}",
    "AWS_SESSION_TOKEN": f"session-{CANARY}",
    "DATABASE_PASSWORD": f"pw-{CANARY}",
    "STRIPE_CLIENT_SECRET": f"stripe-{CANARY}",
    # issue 36: each of these reached commands
    "DB_PASS": f"db-{CANARY}",
    "MYSQL_PWD": f"mysql-{CANARY}",
    "SMTP_PASS": f"smtp-{CANARY}",
    "SENTRY_DSN": f"https://{CANARY}0123@o1.ingest.sentry.io/1",
    "SLACK_WEBHOOK_URL": f"https://hooks.slack.com/services/T0/B0/{CANARY}",
    "GH_PAT": f"github_pat_{CANARY}",
    "CI_JOB_JWT": f"eyJ.{CANARY}.sig",
    "NPM_CONFIG__AUTH": f"npm-{CANARY}",
    "PRIVATE_KEY_PEM": f"-----BEGIN PRIVATE KEY-----{CANARY}",
    "REPO_URL": f"https://ghp_{CANARY}@github.com/o/r.git",  # a token as the URL's user
}
UP = "../" * 30  # from any working directory to /


def allow(params: dict[str, Any]) -> str:
    return "allow"  # the user says yes to everything: only the tools' own rules hold


async def daemon(spawn: Any, env: dict[str, str], **more: str) -> tuple[Client, Tap]:
    planted = {**env, **SECRETS, "ELELEM_LOG_LEVEL": "debug", **more}
    client = await spawn(env=planted, stderr=asyncio.subprocess.PIPE, on_ask=allow)
    tap = Tap()
    tap.attach(client)
    await within(client.initialize())
    return client, tap


def environ_of(pid: int) -> bytes:
    with open(f"/proc/{pid}/environ", "rb") as f:
        return f.read()


async def results(client: Client, session: str, calls: list[tuple[str, dict]]) -> list[dict]:
    found = []
    for name, args in calls:
        events: list[dict] = []
        await within(
            client.turn(session, f"!tool {name} {json.dumps(args)}", on_event=events.append)
        )
        (result,) = [e["params"] for e in events if e["method"] == "event/result"]
        found.append(result)
    return found


async def test_the_daemons_own_environment_holds_no_key(spawn: Any, env: dict[str, str]) -> None:
    client, _ = await daemon(spawn, env)
    block = environ_of(client.process.pid)
    assert b"PATH=" in block  # the file was read (the daemon is still dumpable: no tool ran)
    assert CANARY.encode() not in block
    for name in SECRETS:
        assert f"{name}=".encode() not in block


async def test_no_file_tool_reads_proc_sys_or_dev(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    client, tap = await daemon(spawn, env)
    pid = client.process.pid
    (workdir / "env-link").symlink_to("/proc/self/environ")
    (workdir / "dev-link").symlink_to("/dev/zero")
    probes = [
        ("read", {"path": "/proc/self/environ"}),
        ("read", {"path": f"/proc/{pid}/environ"}),
        ("read", {"path": f"{UP}proc/self/environ"}),
        ("read", {"path": str(workdir / "env-link")}),
        ("read", {"path": str(workdir / "dev-link")}),
        ("read", {"path": f"/proc/{pid}/mem"}),
        ("read", {"path": "/sys/kernel/mm/transparent_hugepage/enabled"}),
        ("grep", {"pattern": "API_KEY", "path": "/proc/self/environ"}),
        ("grep", {"pattern": "KEY", "path": f"{UP}proc/{pid}"}),
        ("glob", {"pattern": "*", "path": "/proc/self"}),
        ("list", {"path": "/proc/self/"}),
        ("list", {"path": f"{UP}dev"}),
        ("write", {"path": f"/proc/{pid}/mem", "content": "x"}),
        ("edit", {"path": str(workdir / "env-link"), "old": "a", "new": "b"}),
    ]
    for cwd in (str(workdir), "/", "/proc"):  # inside the folder, /proc asks nothing
        session = (await within(client.new_session(cwd=cwd)))["sessionId"]
        for (name, args), result in zip(
            probes, await results(client, session, probes), strict=True
        ):
            assert result["ok"] is False, (cwd, name, args, result)
            error = result["result"]["error"]
            assert error.startswith("refused: "), (cwd, name, args, error)
            assert "the file tools do not touch /proc, /sys or /dev" in error
    await client.close()
    await tap.done()
    assert CANARY not in tap.stdout.decode(errors="replace") + tap.stderr.decode(errors="replace")


async def test_commands_cannot_read_a_key_from_any_environment(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    client, tap = await daemon(spawn, env)
    pid = client.process.pid
    commands = [
        "env",
        "cat /proc/self/environ",
        "cat /proc/$PPID/environ",  # the daemon
        f"cat /proc/{pid}/environ",
        f"bash -c 'cat /proc/{pid}/environ; cat /proc/$PPID/environ' | cat",  # a grandchild
        "(sh -c 'env; cat /proc/$PPID/environ') &\nwait",
        f"python3 -c 'print(open(\"/proc/{pid}/environ\").read())'",
    ]
    session = (await within(client.new_session()))["sessionId"]
    found = await results(client, session, [("execute", {"command": c}) for c in commands])
    assert "PATH=" in found[0]["result"]["content"]  # they did print environments
    for command, result in zip(commands, found, strict=True):
        assert result["ok"], (command, result)
        assert CANARY not in json.dumps(result), command
    await client.close()
    await tap.done()
    assert CANARY not in tap.stdout.decode(errors="replace") + tap.stderr.decode(errors="replace")
    assert CANARY not in stored(env).decode(errors="replace")


async def test_the_keep_list_passes_only_the_names_it_lists(
    spawn: Any, env: dict[str, str]
) -> None:
    client, _ = await daemon(spawn, env, ELELEM_TOOL_ENV_KEEP="GITHUB_TOKEN, AWS_ACCESS_*")
    session = (await within(client.new_session()))["sessionId"]
    (result,) = await results(client, session, [("execute", {"command": "env"})])
    lines = set(result["result"]["content"].splitlines())
    seen = {line.split("=", 1)[0] for line in lines if CANARY in line}
    assert seen == {"GITHUB_TOKEN", "AWS_ACCESS_KEY_ID"}
    assert f"GITHUB_TOKEN={SECRETS['GITHUB_TOKEN']}" in lines


async def test_reads_outside_the_folder_ask_first(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    ssh = Path(env["HOME"]) / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text(f"-----BEGIN KEY-----\n{CANARY}\n")
    asked: list[dict[str, Any]] = []

    def deny(params: dict[str, Any]) -> str:
        asked.append(params)
        return "deny"

    client = await spawn(env=env, on_ask=deny)
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    probes = [
        ("read", {"path": "~/.ssh/id_rsa"}),
        ("read", {"path": str(ssh / "id_rsa")}),
        ("grep", {"pattern": "KEY", "path": "~/.ssh"}),
        ("glob", {"pattern": "*", "path": str(ssh)}),
        ("list", {"path": f"{UP}{str(ssh).lstrip('/')}"}),
        ("open", {"path": "~/.ssh/id_rsa"}),  # an alias asks as its tool does
        ("ls", {"path": "~/.ssh"}),
    ]
    found = await results(client, session, probes)
    assert [q["tool"]["name"] for q in asked] == [name for name, _ in probes[:5]] + [
        "read",
        "list",
    ]
    for result in found:
        assert result["result"]["error"].startswith("User denied permission: "), result
        assert CANARY not in json.dumps(result)
    (workdir / "notes.txt").write_text("x\n")
    inside = [("read", {"path": "notes.txt"}), ("grep", {"pattern": "x"}), ("list", {})]
    assert all(r["ok"] for r in await results(client, session, inside))
    assert len(asked) == 7  # nothing inside the folder asked


@pytest.fixture
def replay() -> Any:
    server = ReplayServer()
    yield server
    server.stop()


async def test_no_key_reaches_a_request_body_and_provider_switching_finds_them(
    spawn: Any, env: dict[str, str], workdir: Path, replay: ReplayServer
) -> None:
    clean = {k: v for k, v in env.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    clean.update(OPENAI_BASE_URL=f"{replay.url}/v1", OPENAI_MODEL="local")
    client, tap = await daemon(spawn, clean)
    session = (await within(client.new_session()))["sessionId"]  # the stub
    reply = await within(client.command(session, "/provider openai"))
    assert "openai" in json.dumps(reply)
    (workdir / "env-link").symlink_to("/proc/self/environ")
    replay.queue(
        calls(
            ("read", json.dumps({"path": "/proc/self/environ"})),
            ("read", json.dumps({"path": "env-link"})),
            ("grep", json.dumps({"pattern": "KEY", "path": f"{UP}proc/self/environ"})),
            ("execute", json.dumps({"command": "cat /proc/$PPID/environ; env"})),
        ),
        text_stream(),
    )
    events: list[dict] = []
    answer = await within(client.turn(session, "hi", on_event=events.append), 30)
    assert answer["stopReason"] == "end_turn"
    assert sum(r.method == "POST" for r in replay.requests) == 2  # and the window's lookup
    for request in replay.requests:
        assert request.headers["authorization"] == f"Bearer {SECRETS['OPENAI_API_KEY']}"
        assert CANARY.encode() not in request.body
    sent = replay.requests[-1].json["messages"]
    assert sum(m["role"] == "tool" for m in sent) == 4
    assert "PATH=" in sent[-1]["content"]
    context = await within(client.context(session))
    await client.close()
    await tap.done()
    for where, text in {
        "events": json.dumps(events),
        "context": json.dumps(context),
        "stdout": tap.stdout.decode(errors="replace"),
        "stderr": tap.stderr.decode(errors="replace"),
        "stored sessions": stored(env).decode(errors="replace"),
    }.items():
        assert CANARY not in text, where


PEEK = """
import os, re, sys
hits = 0
for line in open(f"/proc/{os.getppid()}/maps"):
    fields = line.split()
    if "r" not in fields[1]:
        continue
    start, end = (int(x, 16) for x in fields[0].split("-"))
    try:
        with open(f"/proc/{os.getppid()}/mem", "rb") as mem:
            mem.seek(start)
            hits += mem.read(end - start).count(sys.argv[1].encode())
    except OSError as exc:
        print(type(exc).__name__, exc.errno)
        break
print("hits", hits)
"""


@pytest.mark.parametrize("dumpable", ["", "1"])
async def test_a_command_cannot_read_the_daemons_memory(env: dict[str, str], dumpable: str) -> None:
    """The keys are in the daemon's memory; a tool of the same user (not root: root
    reads any memory) cannot read it (`PR_SET_DUMPABLE 0`). With ELELEM_DUMPABLE=1
    (for debuggers) the same probe finds the key: the check can fail."""
    room = Path("/tmp") / f"elelem-keys-{os.getpid()}-{dumpable or 0}"
    shutil.rmtree(room, ignore_errors=True)
    (room / "home" / ".config" / "elelem").mkdir(parents=True)
    (room / "home" / ".config" / "elelem" / "permissions").write_text("execute allow\n")
    (room / "peek.py").write_text(PEEK)
    for folder, _, files in os.walk(room):
        os.chmod(folder, 0o777)
        for name in files:
            os.chmod(Path(folder) / name, 0o666)
    prefix: list[str] = []
    if os.geteuid() == 0:  # run the daemon (and its tools) as an ordinary user
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    mine = {
        **env,
        **SECRETS,
        "HOME": str(room / "home"),
        "XDG_CONFIG_HOME": str(room / "home" / ".config"),
        "XDG_STATE_HOME": str(room / "home" / "state"),
        "ELELEM_DUMPABLE": dumpable,
    }
    command = [*prefix, sys.executable, "-m", "elelem_daemon"]
    client = await Client.spawn("--provider", "stub", command=command, env=mine, cwd=str(room))
    try:
        await within(client.initialize())
        session = (await within(client.new_session()))["sessionId"]
        probe = f"python3 {room}/peek.py {CANARY}"
        (result,) = await results(client, session, [("execute", {"command": probe})])
    finally:
        await client.close()
        shutil.rmtree(room, ignore_errors=True)
    content = result["result"]["content"]
    if dumpable:
        assert "hits " in content and "hits 0" not in content, content
    else:
        assert "PermissionError" in content and "hits" not in content, content


async def test_the_acp_face_and_the_terminal_hold_no_key_either(
    env: dict[str, str], workdir: Path
) -> None:
    planted = {**env, **SECRETS}
    acp = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "--acp", "--provider", "stub",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=planted,
        cwd=str(workdir),
    )  # fmt: skip
    try:
        assert acp.stdin is not None and acp.stdout is not None
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1},
        }
        acp.stdin.write(json.dumps(hello).encode() + b"\n")
        assert json.loads(await within(acp.stdout.readline(), 30))["id"] == 1
        block = environ_of(acp.pid)
        assert b"PATH=" in block and CANARY.encode() not in block
    finally:
        acp.kill()
        await acp.wait()
    command = json.dumps({"command": "{ env; cat /proc/$PPID/environ; } > seen.txt"})
    ask = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "ask", "--provider", "stub", "--no-save",
        f"!tool execute {command}", stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=planted,
        cwd=str(workdir),
    )  # fmt: skip
    out, err = await within(ask.communicate(), 60)
    assert ask.returncode == 0, err
    seen = (workdir / "seen.txt").read_bytes()
    assert b"\nPATH=" in seen and b"\0PATH=" in seen  # it wrote both environments
    assert CANARY.encode() not in seen + out + err
