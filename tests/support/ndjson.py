"""Wire: a process spoken to in raw NDJSON lines (the ACP face), for tests that look at
every byte."""

from __future__ import annotations

import asyncio
import json
from typing import Any

TIMEOUT = 20


class Wire:
    """The daemon on raw pipes: send lines, read JSON objects."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.seen: list[dict[str, Any]] = []

    async def line(self, raw: bytes | str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw.encode() if isinstance(raw, str) else raw)
        await self.process.stdin.drain()

    async def send(self, **message: Any) -> None:
        await self.line(json.dumps({"jsonrpc": "2.0", **message}) + "\n")

    async def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        async with asyncio.timeout(TIMEOUT):
            raw = await self.process.stdout.readuntil(b"\n")
        message = json.loads(raw)
        self.seen.append(message)
        return message

    async def answer(self, ident: Any) -> dict[str, Any]:
        while True:
            message = await self.read()
            if message.get("id") == ident and "method" not in message:
                return message

    async def call(self, ident: int, method: str, params: Any = None) -> dict[str, Any]:
        await self.send(id=ident, method=method, params=params if params is not None else {})
        return await self.answer(ident)
