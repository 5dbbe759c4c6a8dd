"""A real MCP server (stdio) that lists many big tools: `big.py COUNT SIZE [ARGS...]`
lists COUNT tools `tool_0`... whose descriptions are SIZE bytes each, and writes its
whole command line to stderr first (as some servers do), for the tests of the tool
list's budget and of masking the config's secrets in the server's log."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer


def main() -> None:
    count, size = int(sys.argv[1]), int(sys.argv[2])
    print("big.py started with:", " ".join(sys.argv[1:]), file=sys.stderr, flush=True)
    server = MCPServer("big", version="1.0", log_level="WARNING")
    for n in range(count):

        def tool(text: str = "") -> str:
            return text

        body = (f"Tool {n}. " + "x" * size)[:size]
        server.add_tool(tool, name=f"tool_{n}", description=body)
    server.run()


if __name__ == "__main__":
    main()
