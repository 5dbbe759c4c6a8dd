"""OAuth, offline: servers/authed.py is an MCP server with its own authorization server
(the SDK's helpers) on 127.0.0.1 that approves every request at once. The test plays
the user's browser through the manager's `on_authorize` (what a face implements):
it opens the URL, the authorization server redirects to our loopback callback, and the
SDK's flow exchanges the code. What is covered: discovery, dynamic client
registration, PKCE, the code exchange, tokens kept (mode 0600) and used by the next
session without a browser step, and the wait for a user who does not come. What is
not: a real identity provider's login page (there is none offline)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx
from mcp_support import (  # noqa: F401 (fixtures)
    SERVERS,
    allow_mcp,
    free_port,
    listening,
    marks,
    project,
    quick_retries,
    sessions,
    status_of,
    until,
)


async def authed_server(port: int) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVERS / "authed.py"),
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    await listening(port)
    return process


async def browser(urls: list[tuple[str, str]], name: str, url: str) -> None:
    """The user opens the URL and approves; the authorization server redirects."""
    urls.append((name, url))
    async with httpx.AsyncClient(follow_redirects=True, timeout=30, trust_env=False) as client:
        answer = await client.get(url)
    assert answer.status_code == 200 and "Authorized." in answer.text


async def test_the_oauth_flow_then_kept_tokens(sessions, project: Path, marks: Path) -> None:
    allow_mcp()
    port = free_port()
    process = await authed_server(port)
    try:
        servers = {"secure": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}
        urls: list[tuple[str, str]] = []
        first = await sessions(project, servers, wait=False)
        first.mcp.on_authorize = lambda name, url: browser(urls, name, url)
        await until(lambda: status_of(first, "secure")["state"] == "ready", 120)
        assert urls and urls[0][0] == "secure"
        assert urls[0][1].startswith(f"http://127.0.0.1:{port}/authorize?")
        assert (
            "code_challenge=" in urls[0][1] and "redirect_uri=http%3A%2F%2F127.0.0.1" in urls[0][1]
        )
        assert (await first.toolbox.run("secure__add", {"a": 1, "b": 1})).ok

        files = list((Path(first.mcp.servers["secure"].remote.tokens.path).parent).glob("*.json"))
        assert len(files) == 1 and oct(files[0].stat().st_mode & 0o777) == "0o600"
        kept = json.loads(files[0].read_text())
        assert kept["tokens"]["access_token"] and kept["client"]["client_id"] and kept["port"]

        second = await sessions(project, servers, wait=False)
        second.mcp.on_authorize = lambda name, url: browser(urls, name, url)
        await until(lambda: status_of(second, "secure")["state"] == "ready", 120)
        assert len(urls) == 1  # no second browser step: the kept token was used
        assert (marks / "authorized").read_text() == "1"
    finally:
        process.kill()
        await process.wait()


async def test_without_a_face_the_url_is_on_stderr_and_in_the_status(
    sessions, project: Path, capfd, monkeypatch
) -> None:
    monkeypatch.setenv("ELELEM_MCP_AUTH_TIMEOUT", "2")
    port = free_port()
    process = await authed_server(port)
    try:
        servers = {"secure": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}
        session = await sessions(project, servers, wait=False)
        await until(lambda: status_of(session, "secure")["authorizeUrl"], 120)
        status = status_of(session, "secure")
        assert status["state"] == "needs-auth"
        err = capfd.readouterr().err
        assert f"MCP server secure needs authorization: open {status['authorizeUrl']}" in err
        said = (await session.command("/mcp")).output
        assert "needs-auth" in said and "authorize: http://127.0.0.1" in said
        # nobody came: it waits for /mcp restart, without asking again by itself
        await until(
            lambda: "no authorization within 2s" in (status_of(session, "secure")["error"] or ""),
            60,
        )
        assert status_of(session, "secure")["state"] == "needs-auth"
        assert "/mcp restart secure" in status_of(session, "secure")["error"]
    finally:
        process.kill()
        await process.wait()
