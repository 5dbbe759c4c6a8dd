"""The rules both editor faces share, driven through each: the real `elelem daemon` and
`elelem daemon --acp`, side by side. Each rule has one home in the core or an edge
(docs/architecture.md, "One home per rule"); these tests hold the faces to it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support.ndjson import TIMEOUT, Wire

from elelem_daemon.jsonrpc.client import Client, RpcError

pytestmark = pytest.mark.e2e
FACES = ["daemon", "acp"]
LONG = "!stream 400 25"  # ten seconds of deltas, cancelled long before


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CONFIG_HOME=str(home / "config"),
        OLLAMA_HOST="127.0.0.1:9",
    )
    return env


class Face:
    """What the tests ask of a face, in its own protocol."""

    async def new(self) -> str: ...
    async def start(self, session: str, text: str) -> asyncio.Future[Any]: ...
    async def cancel(self, session: str) -> None: ...
    async def first_delta(self, session: str) -> None: ...
    async def kept(self, session: str) -> list[dict[str, Any]]: ...
    async def command(self, session: str, line: str) -> tuple[str, bool]: ...
    async def model(self, session: str) -> str | None: ...
    async def listed(self) -> list[str]: ...
    async def load(self, session: str) -> None: ...
    async def close(self) -> None: ...


class DaemonFace(Face):
    def __init__(self, client: Client, cwd: Path) -> None:
        self.client, self.cwd = client, cwd

    @classmethod
    async def spawn(cls, home: Path, cwd: Path, *args: str) -> DaemonFace:
        client = await Client.spawn(*args, env=environment(home), cwd=str(cwd))
        await asyncio.wait_for(client.initialize(), TIMEOUT)
        return cls(client, cwd)

    async def new(self) -> str:
        return (await self.client.new_session(cwd=str(self.cwd)))["sessionId"]

    async def start(self, session: str, text: str) -> asyncio.Future[Any]:
        turn = await self.client.start_turn(session, text)
        return asyncio.ensure_future(turn.result())

    async def cancel(self, session: str) -> None:
        await self.client.cancel(session)

    async def first_delta(self, session: str) -> None:
        while not any(n["method"] == "event/saying" for n in self.client.notifications):
            await asyncio.sleep(0.01)

    async def kept(self, session: str) -> list[dict[str, Any]]:
        return (await self.client.context(session))[1:]

    async def command(self, session: str, line: str) -> tuple[str, bool]:
        result = await self.client.command(session, line)
        return result["output"], result.get("exit", False)

    async def model(self, session: str) -> str | None:
        (entry,) = [s for s in await self.client.list_sessions() if s["sessionId"] == session]
        return entry["model"]

    async def listed(self) -> list[str]:
        ids = [s["sessionId"] for s in await self.client.list_sessions()]
        return list(dict.fromkeys(ids))  # an open and stored session is listed twice here

    async def load(self, session: str) -> None:
        await self.client.load_session(session)

    async def close(self) -> None:
        await self.client.close()


class AcpFace(Face):
    """ACP over raw lines; answers come back by id, updates are kept by session."""

    def __init__(self, wire: Wire, cwd: Path) -> None:
        self.wire, self.cwd = wire, cwd
        self.ids = iter(range(1, 1_000_000))
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.updates: list[dict[str, Any]] = []
        self.reading = asyncio.ensure_future(self._read())

    @classmethod
    async def spawn(cls, home: Path, cwd: Path, *args: str) -> AcpFace:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "elelem_daemon", "daemon", "--acp", *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env=environment(home), cwd=cwd, limit=16 * 1024 * 1024,
        )  # fmt: skip
        face = cls(Wire(process), cwd)
        await face.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        return face

    async def _read(self) -> None:
        assert self.wire.process.stdout is not None
        while raw := await self.wire.process.stdout.readline():
            message = json.loads(raw)
            if message.get("method") == "session/update":
                self.updates.append(message["params"])
            elif "method" not in message and message.get("id") in self.pending:
                self.pending.pop(message["id"]).set_result(message)

    async def send(self, method: str, params: dict[str, Any]) -> asyncio.Future[Any]:
        ident = next(self.ids)
        self.pending[ident] = asyncio.get_running_loop().create_future()
        future = self.pending[ident]
        await self.wire.send(id=ident, method=method, params=params)
        return future

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        answer = await asyncio.wait_for(await self.send(method, params), TIMEOUT)
        if "error" in answer:
            error = answer["error"]
            raise RpcError(error["code"], error["message"], error.get("data"))
        return answer["result"]

    async def new(self) -> str:
        result = await self.call("session/new", {"cwd": str(self.cwd), "mcpServers": []})
        self.options = {result["sessionId"]: result["configOptions"]}
        return result["sessionId"]

    def prompt_params(self, session: str, text: str) -> dict[str, Any]:
        return {"sessionId": session, "prompt": [{"type": "text", "text": text}]}

    async def start(self, session: str, text: str) -> asyncio.Future[Any]:
        future = await self.send("session/prompt", self.prompt_params(session, text))

        async def result() -> Any:
            answer = await future
            if "error" in answer:
                error = answer["error"]
                raise RpcError(error["code"], error["message"], error.get("data"))
            return answer["result"]

        return asyncio.ensure_future(result())

    async def cancel(self, session: str) -> None:
        await self.wire.send(method="session/cancel", params={"sessionId": session})

    def said(self, session: str) -> list[str]:
        return [
            u["update"]["content"]["text"]
            for u in self.updates
            if u["sessionId"] == session and u["update"]["sessionUpdate"] == "agent_message_chunk"
        ]

    async def first_delta(self, session: str) -> None:
        while not self.said(session):
            await asyncio.sleep(0.01)

    async def kept(self, session: str) -> list[dict[str, Any]]:
        before = len(self.said(session))
        await self.call("session/prompt", self.prompt_params(session, "/context json"))
        fenced = "".join(self.said(session)[before:])
        return json.loads(fenced.strip().strip("`"))[1:]

    async def command(self, session: str, line: str) -> tuple[str, bool]:
        before = len(self.said(session))
        result = await self.call("session/prompt", self.prompt_params(session, line))
        assert result["stopReason"] == "end_turn"
        text = "".join(self.said(session)[before:])
        return text, "To end this session, close it in the editor." in text

    async def model(self, session: str) -> str | None:
        (option,) = [o for o in self.options[session] if o["id"] == "model"]
        return option["currentValue"]

    async def listed(self) -> list[str]:
        return [s["sessionId"] for s in (await self.call("session/list", {}))["sessions"]]

    async def load(self, session: str) -> None:
        params = {"sessionId": session, "cwd": str(self.cwd), "mcpServers": []}
        await self.call("session/load", params)

    async def close(self) -> None:
        process = self.wire.process
        if process.returncode is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), TIMEOUT)
            except TimeoutError:
                process.kill()
                await process.wait()
        self.reading.cancel()


@pytest.fixture
async def spawn(tmp_path: Path) -> AsyncIterator[Any]:
    """spawn(face, *args) -> a started face in tmp_path/project, closed at the end."""
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    started: list[Face] = []

    async def start(face: str, *args: str) -> Face:
        kind = DaemonFace if face == "daemon" else AcpFace
        started.append(await kind.spawn(home, cwd, "-p", "stub", *args))
        return started[-1]

    yield start
    for face in started:
        await face.close()


async def within(awaitable: Any) -> Any:
    return await asyncio.wait_for(awaitable, TIMEOUT)


@pytest.mark.parametrize("name", FACES)
async def test_a_cancelled_turn_answers_and_keeps_the_text_so_far(spawn, name) -> None:
    face = await spawn(name)
    session = await within(face.new())
    running = await within(face.start(session, LONG))
    await within(face.first_delta(session))
    await face.cancel(session)
    answer = await within(running)
    assert answer["stopReason"] == "cancelled"
    *_, prompt, reply = await within(face.kept(session))
    assert prompt == {"role": "user", "content": LONG}
    assert reply["role"] == "assistant" and reply["content"].startswith("tok0 ")
    assert reply["content"].endswith("[cancelled]")
    if name == "daemon":  # the daemon's answer carries the reply: the text that was kept
        assert answer["reply"] == reply["content"]


@pytest.mark.parametrize("name", FACES)
async def test_one_turn_at_a_time_in_a_session(spawn, name) -> None:
    face = await spawn(name)
    session = await within(face.new())
    running = await within(face.start(session, LONG))
    await within(face.first_delta(session))
    # a slash command: over ACP a text prompt during a turn is a steer for it (issue 20,
    # tests/acp_sdk/test_python_sdk_steer.py), a command is refused as a second turn is
    second = await within(face.start(session, "/help"))
    with pytest.raises(RpcError) as busy:
        await within(second)
    assert (busy.value.code, busy.value.kind) == (-32001, "session_busy")
    await face.cancel(session)
    assert (await within(running))["stopReason"] == "cancelled"
    other = await within(face.new())  # sessions run side by side
    assert (await within(await face.start(other, "!echo fine")))["stopReason"] == "end_turn"


@pytest.mark.parametrize("name", FACES)
async def test_exit_is_the_clients_and_the_session_stays_open(spawn, name) -> None:
    face = await spawn(name)
    session = await within(face.new())
    _, exit_asked = await within(face.command(session, "/exit"))
    assert exit_asked
    _, exit_asked = await within(face.command(session, "/help"))
    assert not exit_asked
    assert (await within(await face.start(session, "!echo still here")))["stopReason"] == "end_turn"


@pytest.mark.parametrize("name", FACES)
async def test_the_face_model_applies_to_the_face_provider(spawn, name) -> None:
    face = await spawn(name, "-m", "m1")
    assert await within(face.model(await within(face.new()))) == "m1"


@pytest.mark.parametrize("name", FACES)
async def test_open_then_stored_sessions_in_one_order(spawn, name) -> None:
    seed = await spawn("daemon")
    older, newer = await within(seed.new()), await within(seed.new())
    for session in (older, newer):
        await within(await seed.start(session, f"!echo {session}"))
        await asyncio.sleep(0.05)  # distinct update times
    await seed.close()
    face = await spawn(name)
    fresh = await within(face.new())  # open, not stored yet
    await within(face.load(older))  # open and stored
    assert await within(face.listed()) == [fresh, older, newer]


@pytest.mark.parametrize("name", FACES)
async def test_stored_session_errors_have_one_code_in_both_faces(spawn, name) -> None:
    holder = await spawn("daemon")
    held = await within(holder.new())
    await within(await holder.start(held, "!echo mine"))
    face = await spawn(name)
    with pytest.raises(RpcError) as missing:
        await within(face.load("nope"))
    assert (missing.value.code, missing.value.kind) == (-32002, "unknown_session")
    with pytest.raises(RpcError) as locked:
        await within(face.load(held))
    assert (locked.value.code, locked.value.kind) == (-32003, "session_locked")
