"""An MCP server that answers everything with lines that are not JSON-RPC (and one
line of 20 MiB with no newline, then keeps writing)."""

import sys

out = sys.stdout
out.write("hello, I am not JSON\n")
out.write('{"jsonrpc": "2.0", "id": "not a response"\n')
out.write("[1, 2, 3]\n")
out.flush()
for line in sys.stdin:
    out.write("garbage " + line[::-1] + "\n")
    out.flush()
