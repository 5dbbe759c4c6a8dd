"""The peer: an agent built on the official ACP Python SDK (`agent-client-protocol`).

It does the benchmark's work the ACP way: `initialize`, `session/new`, and a
`session/prompt` whose text is a number N streams N `agent_message_chunk` updates
(`tok0 `, `tok1 `, ...) through the SDK's `session_update`, then ends the turn.
Newline-delimited JSON-RPC on stdio, as ACP speaks it.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import acp
from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse


class BenchAgent:
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=uuid.uuid4().hex)

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        count = int(prompt[0].text)
        for i in range(count):
            await self.conn.session_update(session_id, acp.update_agent_message_text(f"tok{i} "))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


if __name__ == "__main__":
    asyncio.run(acp.run_agent(BenchAgent()))
