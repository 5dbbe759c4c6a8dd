"""The token-latency baseline: a bare relay from an OpenAI-format SSE stream to stdout.

Standard library only. `bench/relay {port, count, gap, first?}` (Content-Length JSON-RPC on
stdio, like `echo.py`) posts a streaming chat request to the SSE server on 127.0.0.1,
turns each chunk's `delta.content` into an `event/saying` notification the moment it
is parsed (one write + flush each), then answers. No agent, no HTTP library, no
pygls: what is left is the floor this machine sets for "chunk in, frame out".
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


async def relay(port: int, count: int, gap: float, first: float = 0) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = json.dumps(
        {
            "model": "bench",
            "stream": True,
            "messages": [{"role": "user", "content": f"{count} {gap} {first}"}],
        }
    ).encode()
    writer.write(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    await writer.drain()
    await reader.readuntil(b"\r\n\r\n")
    pending = b""
    while size := int((await reader.readline()).strip() or b"0", 16):
        pending += await reader.readexactly(size)
        await reader.readexactly(2)
        *events, pending = pending.split(b"\n\n")
        for event in events:
            data = event.partition(b"data: ")[2]
            if not data or data == b"[DONE]":
                continue
            choices = json.loads(data).get("choices") or [{}]
            text = choices[0].get("delta", {}).get("content")
            if text:
                send(
                    {
                        "jsonrpc": "2.0",
                        "method": "event/saying",
                        "params": {"sessionId": "relay", "turnId": 1, "text": text},
                    }
                )
    writer.close()


async def main() -> None:
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    while True:
        length = -1
        while (line := await stdin.readline()) not in (b"\r\n", b"\n"):
            if not line:
                return
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        message = json.loads(await stdin.readexactly(length))
        if "id" not in message:
            continue
        params = message.get("params") or {}
        if message.get("method") == "bench/relay":
            gap, first = float(params["gap"]), float(params.get("first", 0))
            await relay(int(params["port"]), int(params["count"]), gap, first)
        send({"jsonrpc": "2.0", "id": message["id"], "result": {}})


if __name__ == "__main__":
    asyncio.run(main())
