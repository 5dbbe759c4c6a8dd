"""RawDaemon: `elelem daemon` on bare pipes, every byte it writes read and checked.

No client library in between: the frames are cut here, strictly (a header block is
exactly `Content-Length: N` and a blank line, nothing else), so a test sees what an
editor's JSON-RPC library would.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from support.real_folders import own

TIMEOUT = 20
HEADER = re.compile(rb"Content-Length: (\d+)\r\n\r\n")


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def body_of(message: dict[str, Any]) -> bytes:
    """A client's body as editors write it: compact JSON."""
    return json.dumps(message, separators=(",", ":")).encode()


def clean_env(home: Path, **more: str) -> dict[str, str]:
    """No keys, no ELELEM_ settings, a home of its own (no plugins, no permissions file)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ELELEM_", "ANTHROPIC_", "OPENAI_", "OLLAMA_"))
    }
    return {**own(home, env), **more}  # HOME and every XDG_* under home


class RawDaemon:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.buffer = b""

    @classmethod
    async def spawn(cls, *args: str, env: dict[str, str], cwd: Path) -> RawDaemon:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "elelem_daemon", *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env, cwd=cwd,
        )  # fmt: skip
        return cls(process)

    async def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def send(self, message: dict[str, Any]) -> bytes:
        body = body_of(message)
        await self.write(frame(body))
        return body

    async def _more(self) -> None:
        assert self.process.stdout is not None
        chunk = await asyncio.wait_for(self.process.stdout.read(65536), TIMEOUT)
        if not chunk:
            raise EOFError(f"the daemon closed its stdout; unread: {self.buffer[:200]!r}")
        self.buffer += chunk

    async def body(self) -> bytes:
        """The next frame's body; the header must be exactly `Content-Length: N\\r\\n\\r\\n`."""
        while b"\r\n\r\n" not in self.buffer:
            await self._more()
        head, _, _ = self.buffer.partition(b"\r\n\r\n")
        match = HEADER.match(self.buffer)
        assert match is not None, f"not a bare Content-Length header: {head[:200]!r}"
        length, start = int(match.group(1)), match.end()
        while len(self.buffer) < start + length:
            await self._more()
        body, self.buffer = self.buffer[start : start + length], self.buffer[start + length :]
        return body

    async def message(self) -> dict[str, Any]:
        return json.loads(await self.body())

    async def answer(self, ident: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The response to `ident`, and every message that came before it."""
        before = []
        while True:
            message = await self.message()
            if message.get("id") == ident and "method" not in message:
                return message, before
            before.append(message)

    async def call(self, ident: Any, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        answer, _ = await self.answer(ident)
        return answer

    async def catches(self, sig: int = signal.SIGTERM) -> None:
        """Wait until the process has its handler for `sig` (it started up)."""
        bit = 1 << (sig - 1)
        async with asyncio.timeout(TIMEOUT):
            while True:
                with open(f"/proc/{self.process.pid}/status") as status:
                    caught = next(line for line in status if line.startswith("SigCgt:"))
                if int(caught.split()[1], 16) & bit:
                    return
                await asyncio.sleep(0.02)

    async def close(self) -> int:
        if self.process.returncode is None:
            if self.process.stdin is not None:
                self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), TIMEOUT)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        assert self.process.returncode is not None
        return self.process.returncode
