"""A real MCP server on the SDK's server API (MCPServer, FastMCP's name in mcp 2), for
the tests: `demo.py` speaks stdio, `demo.py http PORT` Streamable HTTP and
`demo.py sse PORT` the older HTTP+SSE, on 127.0.0.1.

MARKS (an environment variable naming a folder) is where it leaves what the tests
look for: `cancelled` when a call was cancelled, `child` with the pid of a process it
started, `env` with its environment as JSON.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

MARKS = Path(os.environ.get("MARKS", "."))
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 24).decode()


def mark(name: str, text: str) -> None:
    MARKS.mkdir(parents=True, exist_ok=True)
    (MARKS / name).write_text(text)


def make(**options: Any) -> MCPServer:
    """The demo server; options go to MCPServer (auth, for authed.py)."""
    server = MCPServer("demo", version="1.0", log_level="WARNING", **options)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers"""
        return a + b

    @server.tool()
    def shout(text: str) -> str:
        """Say it louder"""
        return text.upper() + "!"

    @server.tool(structured_output=False)
    def weather(city: str) -> str:
        """Weather as structured content"""
        raise NotImplementedError  # replaced below by a low-level result

    @server.tool()
    def fail(why: str) -> str:
        """Always fails"""
        raise ToolError(f"it failed: {why}")

    @server.tool()
    def picture() -> list:
        """An image"""
        from mcp.server.mcpserver.utilities.types import Image

        return ["a tiny picture", Image(data=base64.b64decode(PNG), format="png")]

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, unless cancelled"""
        mark("slow-started", "yes")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            mark("cancelled", "yes")
            raise
        return "slept"

    @server.tool()
    def crash() -> str:
        """Exit the process in the middle of the call"""
        sys.stdout.flush()
        os._exit(3)

    @server.tool()
    def environment() -> str:
        """Write this process's environment to MARKS/env"""
        mark("env", json.dumps(dict(os.environ)))
        return "written"

    @server.tool()
    def spawn() -> str:
        """Start a grandchild that would outlive the server if nothing killed it"""
        child = subprocess.Popen(["sleep", "600"], start_new_session=False)
        mark("child", str(child.pid))
        return str(child.pid)

    @server.tool()
    async def grow(name: str, ctx: Context) -> str:
        """Add a tool named NAME, then tell the client the list changed"""

        def added() -> str:
            return f"I am {name}"

        server.add_tool(added, name=name, description=f"Added at run time: {name}")
        await ctx.session.send_tool_list_changed()
        return "grown"

    @server.prompt()
    def review(path: str, focus: str = "bugs") -> str:
        """Review a file"""
        return f"Review {path}, looking for {focus}."

    @server.resource("note://hello", mime_type="text/plain")
    def hello() -> str:
        """A note"""
        return "Hello from a resource"

    # `weather` answers with structuredContent and a text block of the same JSON
    original = server.call_tool

    async def call_tool(name, arguments, *rest, **more):  # type: ignore[no-untyped-def]
        if name == "weather":
            data = {"city": arguments.get("city"), "celsius": 21, "sky": "clear"}
            return CallToolResult(
                content=[TextContent(type="text", text=json.dumps(data))],
                structured_content=data,
            )
        return await original(name, arguments, *rest, **more)

    server.call_tool = call_tool  # type: ignore[method-assign]
    return server


if __name__ == "__main__":
    server = make()
    if len(sys.argv) >= 3 and sys.argv[1] in ("http", "sse"):
        kind = "streamable-http" if sys.argv[1] == "http" else "sse"
        server.run(kind, host="127.0.0.1", port=int(sys.argv[2]))  # type: ignore[call-overload]
    else:
        server.run()
