"""A local OpenAI-format streaming server that timestamps each chunk it sends.

`python bench/servers/sse.py` listens on 127.0.0.1 (a free port, printed as the first
line of stdout) and answers:
- `POST /v1/chat/completions` with `stream: true`: the last user message is `N MS`
  or `N MS FIRST`; it sends its headers, waits FIRST ms (a model reading the prompt;
  default 0), then streams N chunks whose `delta.content` is `c0 `, `c1 `, ..., MS ms
  apart, then a finish chunk, a usage chunk and `data: [DONE]`. Each chunk's `time.perf_counter()`
  just before its write is kept (CLOCK_MONOTONIC: comparable across processes).
- `GET /stamps`: those times for the last stream, as a JSON list.

Standard library only; HTTP/1.1 with chunked transfer encoding, one request per
connection.
"""

from __future__ import annotations

import asyncio
import json
import time

stamps: list[float] = []


def chunk(payload: dict | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    event = f"data: {data}\n\n".encode()
    return b"%x\r\n%s\r\n" % (len(event), event)


def delta(content: str | None, finish: str | None = None) -> dict:
    return {
        "id": "bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "bench",
        "choices": [
            {
                "index": 0,
                "delta": {} if content is None else {"content": content},
                "finish_reason": finish,
            }
        ],
    }


async def stream(writer: asyncio.StreamWriter, count: int, delay: float, first: float = 0) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    await writer.drain()
    stamps.clear()
    if first:
        await asyncio.sleep(first)
    for i in range(count):
        await asyncio.sleep(delay)
        data = chunk(delta(f"c{i} "))
        stamps.append(time.perf_counter())
        writer.write(data)
        await writer.drain()
    usage = {
        **delta(None),
        "choices": [],
        "usage": {"prompt_tokens": 1, "completion_tokens": count, "total_tokens": count + 1},
    }
    for tail in (delta(None, "stop"), usage, "[DONE]"):
        writer.write(chunk(tail))
    writer.write(b"0\r\n\r\n")
    await writer.drain()


def plain(status: str, body: bytes) -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        request, *lines = head.decode("latin-1").split("\r\n")
        method, path, _ = request.split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        if method == "GET" and path == "/stamps":
            writer.write(plain("200 OK", json.dumps(stamps).encode()))
        elif method == "POST" and path.endswith("/chat/completions"):
            messages = json.loads(body)["messages"]
            last = next(m for m in reversed(messages) if m["role"] == "user")
            content = last["content"]
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content)
            count, delay, first = (content.split() + ["0", "0"])[:3]
            await stream(writer, int(count), float(delay) / 1000, float(first) / 1000)
        else:
            writer.write(plain("404 Not Found", b'{"error":{"message":"not found"}}'))
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
