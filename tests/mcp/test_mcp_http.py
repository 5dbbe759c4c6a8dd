"""Real MCP servers over HTTP on 127.0.0.1: Streamable HTTP and the older HTTP+SSE,
headers, a server that goes away and comes back, one that is not there."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp_support import (  # noqa: F401 (fixtures)
    HttpServer,
    allow_mcp,
    free_port,
    http_server,
    listening,
    marks,
    project,
    quick_retries,
    sessions,
    status_of,
    until,
)


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_tools_prompts_and_resources_over_http(
    sessions, project: Path, http_server, kind: str
) -> None:
    allow_mcp()
    server = await http_server(kind)
    session = await sessions(project, {"web": {"type": kind, "url": server.url}})
    status = status_of(session, "web")
    assert status["state"] == "ready", status
    assert status["transport"] == kind and status["pid"] is None and status["log"] is None
    assert (await session.toolbox.run("web__add", {"a": 20, "b": 22})).payload["content"] == "42"
    failed = await session.toolbox.run("web__fail", {"why": "remote"})
    assert not failed.ok and "remote" in failed.error
    weather = await session.toolbox.run("web__weather", {"city": "Rome"})
    assert '"city": "Rome"' in weather.payload["content"]
    await session.command("/web:review a.py")
    assert "Review a.py" in [m["content"] for m in session.conversation if m["role"] == "user"][-1]
    read = await session.toolbox.run("resource", {"server": "web", "uri": "note://hello"})
    assert read.payload["content"] == "Hello from a resource"


async def test_list_changed_and_cancel_over_streamable_http(
    sessions, project: Path, http_server, marks: Path
) -> None:
    allow_mcp()
    server = await http_server()
    session = await sessions(project, {"web": {"type": "http", "url": server.url}})
    assert (await session.toolbox.run("web__grow", {"name": "late"})).ok
    await until(lambda: "web__late" in session.toolbox)
    turn = asyncio.ensure_future(session.turn('!tool web__slow {"seconds": 300}'))
    await until(lambda: (marks / "slow-started").exists())
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    await until(lambda: (marks / "cancelled").exists())


async def test_a_server_that_goes_away_and_comes_back(sessions, project: Path, http_server) -> None:
    allow_mcp()
    server = await http_server()
    session = await sessions(project, {"web": {"type": "http", "url": server.url}})
    await server.stop()
    gone = await session.toolbox.run("web__add", {"a": 1, "b": 1})
    assert not gone.ok and "MCP server web" in gone.error
    await until(lambda: status_of(session, "web")["state"] in ("retrying", "failed"))
    await server.start()  # same port
    session.mcp.servers["web"].restart()
    await until(lambda: status_of(session, "web")["state"] == "ready")
    assert (await session.toolbox.run("web__add", {"a": 1, "b": 1})).ok


async def test_nothing_listening_is_a_clear_error(sessions, project: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    session = await sessions(project, {"nobody": {"type": "http", "url": url, "timeout": 5}})
    status = status_of(session, "nobody")
    assert status["state"] == "failed"
    assert status["error"], status
    assert session.toolbox.names() == [n for n in session.toolbox.names() if "__" not in n]


async def test_headers_are_sent(sessions, project: Path) -> None:
    """A bare 127.0.0.1 HTTP server records the first request's headers."""
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 500 Nope\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        servers = {
            "h": {
                "type": "http",
                "url": f"http://127.0.0.1:{port}/mcp",
                "headers": {"Authorization": "Bearer abc", "X-Team": "core"},
                "timeout": 5,
            }
        }
        await sessions(project, servers)
        head = seen[0].decode().lower()
        assert "authorization: bearer abc" in head and "x-team: core" in head
    finally:
        listener.close()
