"""A small stdio MCP server on the SDK's server API, for the MCP figure: three tools.

`mcp_tools.py client` is the baseline instead: a bare SDK client that spawns this same
server, runs `initialize` and `tools/list`, prints the tool count and exits."""

from __future__ import annotations

import sys


def serve() -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench", log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add"""
        return a + b

    @server.tool()
    def echo(text: str) -> str:
        """Echo"""
        return text

    @server.tool()
    def now() -> float:
        """Time"""
        import time

        return time.time()

    server.run()


async def client() -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[__file__])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        print(len((await session.list_tools()).tools), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["client"]:
        import anyio

        anyio.run(client)
    else:
        serve()
