"""The baseline server: bare asyncio, Content-Length JSON-RPC on stdio, nothing else.

- `initialize` answers at once (the cold-start baseline);
- `bench/stream {sessionId, count}` writes `count` `event/saying` notifications shaped
  exactly like the daemon's, one `write` + `flush` per message, then answers (the raw
  framed writer, the throughput baseline);
- `shutdown` answers null; `exit` or end of stdin ends the process;
- any other request answers its params back (the round-trip baseline).

Run as a file (`python bench/servers/echo.py`), so that nothing but the standard library
is imported.
"""

from __future__ import annotations

import asyncio
import json
import sys

OUT = sys.stdout.buffer


def send(message: dict) -> None:
    body = json.dumps(message, separators=(",", ":")).encode()
    OUT.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    OUT.flush()


def stream(session_id: str, count: int) -> None:
    for i in range(count):
        send(
            {
                "jsonrpc": "2.0",
                "method": "event/saying",
                "params": {"sessionId": session_id, "turnId": 1, "text": f"tok{i} "},
            }
        )


def answer(message: dict) -> None:
    method, params = message.get("method"), message.get("params") or {}
    if method == "exit":
        raise SystemExit(0)
    if "id" not in message:
        return
    if method == "initialize":
        result = {"serverInfo": {"name": "echo", "version": "0"}, "capabilities": {}}
    elif method == "bench/stream":
        stream(params.get("sessionId", "s"), int(params["count"]))
        result = {"reply": "", "stopReason": "end_turn"}
    elif method == "shutdown":
        result = None
    else:
        result = params
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        length = -1
        while True:
            line = await reader.readline()
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length < 0:
            continue
        answer(json.loads(await reader.readexactly(length)))


if __name__ == "__main__":
    asyncio.run(main())
