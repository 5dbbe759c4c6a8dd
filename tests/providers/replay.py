"""ReplayServer: a real HTTP/1.1 server on 127.0.0.1 that replays scripted answers.

It runs its own asyncio loop in a thread, so synchronous code (the Ollama probe) and
the test's own loop can both talk to it. Each POST takes the next queued `Reply`;
GET paths answer from `routes`. Every request is recorded (method, path, headers,
body): a GET (metadata: a provider asks what the server is) in `gets`, the others in
`requests`. A reply's body is a list of steps:

- `bytes`: written as one chunk and flushed (chunked transfer encoding);
- `Sleep(s)`: wait, e.g. to outlast the client's read timeout;
- `Gate(event)`: wait until the test sets a `threading.Event`;
- `Cut()`: drop the connection without finishing the body;
- `Hang()`: wait until the client goes away, then set `server.disconnected`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Sleep:
    seconds: float


@dataclass
class Gate:
    event: threading.Event


@dataclass
class Cut:
    pass


@dataclass
class Hang:
    pass


@dataclass
class Reply:
    body: list[Any] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    chunked: bool = True  # False: no length, the body ends when the connection closes


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def chunks(data: bytes, size: int) -> list[bytes]:
    """Slice a stream into `size`-byte pieces, so lines and events straddle chunks."""
    return [data[i : i + size] for i in range(0, len(data), size)]


def json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps(payload).encode()
    return Reply([body], status, headers or {}, "application/json")


class ReplayServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.routes: dict[str, Reply] = {}
        self.requests: list[Request] = []
        self.gets: list[Request] = []
        self.disconnected = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        self.url = f"http://127.0.0.1:{self.port}"

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def stop(self) -> None:
        async def shutdown() -> None:
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    # -- the thread -------------------------------------------------------------
    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                key, value = line.split(":", 1)
                headers[key.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", 0)))
        (self.gets if method == "GET" else self.requests).append(
            Request(method, path, headers, body)
        )
        reply = self.routes.get(path) if method == "GET" else None
        if reply is None:
            reply = self.replies.pop(0) if self.replies and method == "POST" else None
        if reply is None:
            reply = json_reply(404, {"error": f"no scripted reply for {method} {path}"})
        return await self._answer(reply, reader, writer)

    async def _answer(
        self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        head = [f"HTTP/1.1 {reply.status} Scripted", f"content-type: {reply.content_type}"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        head.append("transfer-encoding: chunked" if reply.chunked else "connection: close")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        for step in reply.body:
            if isinstance(step, bytes):
                if reply.chunked:
                    writer.write(f"{len(step):x}\r\n".encode() + step + b"\r\n")
                else:
                    writer.write(step)
                await writer.drain()
            elif isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, Gate):
                for _ in range(3000):  # 30 s at most
                    if step.event.is_set():
                        break
                    await asyncio.sleep(0.01)
            elif isinstance(step, Cut):
                return False  # _serve closes the socket; the body never finishes
            elif isinstance(step, Hang):
                try:
                    await asyncio.wait_for(reader.read(), 30)
                except TimeoutError:
                    return False
                self.disconnected.set()
                return False
        if not reply.chunked:
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
