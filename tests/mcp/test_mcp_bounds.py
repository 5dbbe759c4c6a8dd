"""Issue 29, through the real daemon and real stdio MCP servers: the MCP tools offered
to the model have a total bound in bytes (ELELEM_MCP_TOOLS_CAP), the largest servers'
largest tools cut with a `/mcp` problem line; secrets a user's config passes in
`args` and `env` are masked in `/mcp`, the `event/mcp` frames and the server's log."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_support import SERVERS, project, quick_retries, stdio, until  # noqa: F401 (fixtures)
from support import model as models
from support.model import Model

from elelem_daemon.jsonrpc.client import Client

TOKEN = "ghp_Zq81canaryTokenAbcdef123456"
PASSWORD = "pw-canary-Hx72mN"
ENV_SECRET = "env-canary-value-Pq19"


@pytest.fixture
def model() -> Iterator[Model]:
    yield from models.serving()


def home(tmp_path: Path, servers: dict[str, Any]) -> dict[str, str]:
    config = tmp_path / "home" / ".config" / "elelem"
    config.mkdir(parents=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    values = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    return {
        **values,
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "XDG_STATE_HOME": str(tmp_path / "home" / ".local" / "state"),
        "ELELEM_MCP_TIMEOUT": "120",
    }


def big(count: int, size: int, *args: str, **more: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [str(SERVERS / "big.py"), str(count), str(size), *args],
        **more,
    }


async def ready(client: Client, sid: str, names: list[str]) -> dict[str, Any]:
    async def check() -> Any:
        out = (await client.command(sid, "/mcp"))["output"]
        return out if all(f"**{n}** (user, stdio): ready" in out for n in names) else None

    return await until(check, 120, 0.2)


async def test_the_tools_offered_have_a_total_bound_and_the_cut_is_said(
    tmp_path: Path, project: Path, model: Model
) -> None:
    env = home(tmp_path, {"huge": big(400, 10_000), "small": stdio()})
    env = models.env(model, env, ELELEM_MCP_TOOLS_CAP=str(200_000))
    client = await Client.spawn("-p", "openai", env=env, cwd=str(project))
    try:
        await client.initialize()
        sid = (await client.new_session(cwd=str(project)))["sessionId"]
        await ready(client, sid, ["huge", "small"])
        await client.turn(sid, "hello")
        sent = [r for r in model.requests if r.method == "POST"][-1]
        tools = sent.json["tools"]
        mcp = [t for t in tools if "__" in t["function"]["name"]]
        mcp_bytes = sum(len(json.dumps(t)) for t in mcp)
        assert len(sent.body) < 400_000  # not the 4 MB the server lists
        assert mcp_bytes <= 220_000  # the cap, as sent in the provider's own shape
        names = {t["function"]["name"] for t in mcp}
        assert {"small__add", "small__shout"} <= names  # the small server kept everything
        kept_huge = sum(1 for n in names if n.startswith("huge__"))
        assert 10 < kept_huge < 400
        detail = (await client.command(sid, "/mcp huge"))["output"]
        assert f"{400 - kept_huge} of 400 tools left out" in detail
        assert "ELELEM_MCP_TOOLS_CAP (200000 bytes)" in detail
        assert "left out" not in (await client.command(sid, "/mcp small"))["output"]
    finally:
        await client.close()


async def test_secrets_in_args_and_env_are_masked_in_status_frames_and_log(
    tmp_path: Path, project: Path
) -> None:
    args = [
        "--token",
        TOKEN,
        f"--db=postgres://app:{PASSWORD}@db.example.com/app",
        f"API_KEY={ENV_SECRET}x",
        "--db-path",
        "/tmp/plain.db",
    ]
    env = home(tmp_path, {"big": big(2, 10, *args, env={"SERVICE_TOKEN": ENV_SECRET})})
    client = await Client.spawn("--provider", "stub", env=env, cwd=str(project))
    try:
        await client.initialize()
        sid = (await client.new_session(cwd=str(project)))["sessionId"]
        await ready(client, sid, ["big"])
        detail = (await client.command(sid, "/mcp big"))["output"]
        frames = [n for n in client.notifications if n.get("method") == "event/mcp"]
    finally:
        await client.close()
    log = Path(env["XDG_STATE_HOME"]) / "elelem" / "mcp"
    logged = "".join(p.read_text(errors="replace") for p in log.glob("*.log"))
    assert "big.py started with: 2 10 --token" in logged  # the server's own stderr is there
    assert "--db-path /tmp/plain.db" in detail  # what is not secret is shown
    assert "--token *** --db=postgres://app:***@db.example.com/app API_KEY=***" in detail
    targets = [s["target"] for f in frames for s in f["params"]["mcp"]["servers"]]
    assert targets and all("--token *** " in t for t in targets)
    for where, text in {"/mcp": detail, "log": logged, "frames": json.dumps(frames)}.items():
        for secret in (TOKEN, PASSWORD, ENV_SECRET):
            assert secret not in text, where


SHELLED = {  # issue 36: each of these was shown whole
    "password": "pw-canary-Sh3ll-pass",
    "short": "pw-canary-ShortP-9",
    "bearer": "bearer-canary-Tok-77",
    "user": "0123456789abcdef0123canary",
    "path": "a1b2c3d4e5f6a7b8c9d0canary",
}


async def test_secrets_in_a_shell_string_a_header_and_a_url_are_masked_everywhere(
    tmp_path: Path, project: Path
) -> None:
    s = SHELLED
    line = (
        f"exec {sys.executable} {SERVERS / 'big.py'} 2 10 --password {s['password']} "
        f"-p {s['short']} -H 'Authorization: Bearer {s['bearer']}' "
        f"https://{s['user']}@git.example.com/r.git https://mcp.example.com/{s['path']}/sse"
    )
    env = home(tmp_path, {"shelled": {"command": "sh", "args": ["-c", line]}})
    client = await Client.spawn("--provider", "stub", env=env, cwd=str(project))
    try:
        await client.initialize()
        sid = (await client.new_session(cwd=str(project)))["sessionId"]
        await ready(client, sid, ["shelled"])
        detail = (await client.command(sid, "/mcp shelled"))["output"]
        frames = [n for n in client.notifications if n.get("method") == "event/mcp"]
    finally:
        await client.close()
    log = Path(env["XDG_STATE_HOME"]) / "elelem" / "mcp"
    logged = "".join(p.read_text(errors="replace") for p in log.glob("*.log"))
    assert "big.py started with: 2 10 --password ***" in logged
    assert "-H 'Authorization: Bearer ***' https://***@git.example.com/r.git" in detail
    assert "https://mcp.example.com/***/sse" in detail
    assert frames
    for where, text in {"/mcp": detail, "log": logged, "frames": json.dumps(frames)}.items():
        for name, secret in s.items():
            assert secret not in text, (where, name)
