"""Replays of what real ACP clients send, message by message, on raw NDJSON pipes.

Each client's shapes are taken from its own adapter (read, not copied): codecompanion.nvim
19.22 (`lua/codecompanion/acp/init.lua`, `prompt_builder.lua`, `adapters/acp/goose.lua`,
which the README's config extends), avante.nvim (`lua/avante/libs/acp_client.lua`) and
acpx 0.19 (`src/client.ts`). Lua's `vim.json.encode` writes an empty table as `[]`, so
codecompanion's `mcpServers = {}` arrives as `[]`, and a prompt it could not fill as
`"prompt": []`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.acp_schema import Checker
from support.ndjson import TIMEOUT, Wire

Answer = Callable[[dict[str, Any]], Any]


def environment(home: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ELELEM_", "OPENAI_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        ELELEM_PROVIDER="stub",
    )
    env.update(more)
    return env


class Client(Wire):
    """An editor on the pipes: sends its requests, answers the agent's with `answers`
    (method -> function of the request), keeps every update it gets."""

    def __init__(self, process: asyncio.subprocess.Process, answers: dict[str, Answer]) -> None:
        super().__init__(process)
        self.answers = answers
        self.updates: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []
        self.next_id = 0
        self.checker: Checker | None = None  # set: every message checked (1.21, SDK 2.4.0)

    async def line(self, raw: bytes | str) -> None:
        if self.checker is not None:
            self.checker.check(json.loads(raw), "client")
        await super().line(raw)

    async def read(self) -> dict[str, Any]:
        message = await super().read()
        if self.checker is not None:
            self.checker.check(message, "agent")
        return message

    @classmethod
    async def start(
        cls, home: Path, cwd: Path, answers: dict[str, Answer] | None = None, **env: str
    ) -> Client:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "elelem_daemon", "daemon", "--acp",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env=environment(home, **env), cwd=cwd, limit=16 * 1024 * 1024,
        )  # fmt: skip
        return cls(process, answers or {})

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send as the clients do (compact JSON, one line), then serve the agent's requests
        and collect its updates until the answer comes."""
        self.next_id += 1
        ident = self.next_id
        line = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        await self.line(json.dumps(line, separators=(",", ":")) + "\n")
        async with asyncio.timeout(TIMEOUT):
            while True:
                message = await self.read()
                if message.get("method") == "session/update":
                    self.updates.append(message["params"]["update"])
                elif "method" in message and "id" in message:
                    await self.serve(message)
                elif message.get("id") == ident:
                    return message

    async def expect(self, kind: str, count: int = 1) -> list[dict[str, Any]]:
        """The updates of `kind`, once `count` of them came (waiting for more if need be)."""
        async with asyncio.timeout(TIMEOUT):
            while len(self.of(kind)) < count:
                message = await self.read()
                if message.get("method") == "session/update":
                    self.updates.append(message["params"]["update"])
                elif "method" in message and "id" in message:
                    await self.serve(message)
        return self.of(kind)

    async def serve(self, message: dict[str, Any]) -> None:
        self.asked.append(message)
        answer = self.answers.get(message["method"])
        if answer is None:
            reply = {"error": {"code": -32601, "message": "Method not found"}}
        else:
            try:
                reply = {"result": answer(message["params"])}
            except ClientRefusal as refusal:
                reply = {"error": refusal.error}
        await self.line(json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}) + "\n")

    def text(self, since: int = 0, kind: str = "agent_message_chunk") -> str:
        """The joined text of the chunks from update number `since` on, as clients join it."""
        chunks = [u for u in self.updates[since:] if u["sessionUpdate"] == kind]
        return "".join(u["content"]["text"] for u in chunks)

    def of(self, kind: str, since: int = 0) -> list[dict[str, Any]]:
        return [u for u in self.updates[since:] if u["sessionUpdate"] == kind]

    async def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return await asyncio.wait_for(self.process.wait(), TIMEOUT)


class ClientRefusal(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error


def fences_balanced(markdown: str) -> bool:
    """Whether every fenced code block opened in the text is closed again: what a Markdown
    chat buffer (codecompanion's) needs so that the next heading is not swallowed."""
    opened: str | None = None
    for line in markdown.splitlines():
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) > 3 or not stripped.startswith("```"):
            continue
        fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
        if opened is None:
            opened = fence
        elif fence.startswith(opened) and not stripped[len(fence) :].strip():
            opened = None
    return opened is None
