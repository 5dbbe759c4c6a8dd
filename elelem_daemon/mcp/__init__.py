"""MCP: servers of the user's, the project's and the face's choosing, as a session's
tools (`SERVER__TOOL`), slash commands (`/SERVER:PROMPT`) and the `resource` tool.

Modules, one noun each:
- config: where servers are configured, in which forms, merged (no SDK);
- entries: one entry checked into a `ServerConfig`, `${VAR}` expanded (no SDK);
- names: the tool and command name rule (no SDK);
- manager: `McpManager`, a session's servers and what they add to it (`manager_of`);
- server: `McpServer`, one server's connection, retries, status and calls;
- process: `ServerProcess`, a stdio server's process, pipes, log and end;
- remote: Streamable HTTP and SSE connections, with OAuth (oauth.py);
- environment: what a server's process inherits, and its guards;
- toolset, schema, results, status: tools, their schemas, call results, /mcp.

Importing this package (or config, names, manager) does not import the MCP SDK; the
first configured server does (~0.7 s, off the session's critical path).
"""
