"""Drive the real `elelem daemon --acp` with the official Python ACP client.

`Editor` is the client side: it records every `session/update`, answers permission
requests from a script, and serves files from memory like an editor's buffers.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp  # noqa: E402  (the `test` extra installs agent-client-protocol: never skip)
from acp.schema import (  # noqa: E402
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)
from support.processes import alive  # noqa: F401  (the tests import it from here)
from support.real_folders import own

TIMEOUT = 20


class Editor:
    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[dict[str, Any]] = []
        self.answers: list[str | None] = []  # optionIds to pick in turn; None = cancelled
        self.forms: list[dict[str, Any]] = []
        self.form_answers: list[str | None] = []  # None: the user declines
        self.buffers: dict[str, str] = {}
        self.writes: list[tuple[str, str]] = []
        self.seen = asyncio.Event()
        self.asked = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))
        self.seen.set()

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **_: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(
            {"sessionId": session_id, "toolCall": tool_call, "options": options}
        )
        self.asked.set()
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def create_elicitation(self, message: str, mode: Any, **_: Any) -> Any:
        self.forms.append({"message": message, "mode": mode})
        answer = self.form_answers.pop(0) if self.form_answers else None
        if answer is None:
            return DeclineElicitationResponse(action="decline")
        return AcceptElicitationResponse(action="accept", content={"answer": answer})

    async def read_text_file(
        self,
        path: str,
        session_id: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        if path not in self.buffers:
            raise acp.RequestError(-32002, "Resource not found", {"uri": path})
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(
        self, content: str, path: str, session_id: str, **_: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [u.session_update for s, u in self.updates if session_id in (None, s)]

    def of(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def said(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    async def until(self, check: Callable[[], bool]) -> None:
        async with asyncio.timeout(TIMEOUT):
            while not check():
                self.seen.clear()
                await self.seen.wait()


async def gone(argv: list[str]) -> bool:
    """True once no such process runs (waiting up to 2 seconds for the reaper)."""
    for _ in range(20):
        if not alive(argv):
            return True
        await asyncio.sleep(0.1)
    return False


def environment(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ELELEM_")}
    env["ELELEM_PROVIDER"] = "stub"  # whatever keys this machine has
    return own(home, env)  # no user plugins, permissions or stored sessions: every XDG_*


@asynccontextmanager
async def daemon(
    tmp_path: Path,
    editor: Editor,
    fs: bool = False,
    forms: bool = False,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    command: str | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """`COMMAND ARGS`; by default `python -m elelem_daemon daemon --acp`."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    argv = [command] if command else [sys.executable, "-m", "elelem_daemon"]
    async with acp.spawn_agent_process(
        editor,
        *argv,
        *(args or ["daemon", "--acp"]),
        env={**environment(home), **(env or {})},
        cwd=tmp_path,
        transport_kwargs={"stderr": None},
        use_unstable_protocol=forms,  # elicitation is unstable in this SDK
    ) as (conn, process):
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
            elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
            if forms
            else None,
        )
        async with asyncio.timeout(TIMEOUT):
            await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION,
                client_capabilities=capabilities,
                client_info=Implementation(name="pytest", version="1"),
            )
        yield conn, process
