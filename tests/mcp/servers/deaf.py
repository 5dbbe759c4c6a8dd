"""A hand-written MCP server that answers `initialize` and `tools/list`, then, at the
first `tools/call`, neither answers nor reads its stdin any more."""

import json
import sys
import time

TOOL = {"name": "wait", "description": "Never answers", "inputSchema": {"type": "object"}}
for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "deaf", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        time.sleep(3600)
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)
