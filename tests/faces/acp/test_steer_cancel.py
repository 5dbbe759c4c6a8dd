"""A withdrawn steer (`$/cancel_request` for the prompt that carried it) is answered,
not raised: the request's task takes its cancel back (`Task.uncancel`, as `Live.turn`
does), so nothing after it in that task believes it is still being cancelled."""

from __future__ import annotations

import asyncio
from typing import Any

from elelem_daemon.faces.acp.editor import AcpOutput
from elelem_daemon.faces.acp.live import AcpLive
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start


class Sent:
    def notify(self, method: str, params: dict[str, Any]) -> None:
        pass


async def test_a_withdrawn_steer_takes_its_cancel_back(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_CHECKPOINTS", "0")  # not this test's subject
    registry = core_registry(entry_points=False).child()
    gate, running = asyncio.Event(), asyncio.Event()

    async def wait(session: Any, args: dict[str, Any]) -> dict[str, Any]:
        running.set()
        await gate.wait()
        return {"waited": True}

    registry.plugin("test").tool("wait", "waits for the test")(wait)
    output = AcpOutput(Sent())  # type: ignore[arg-type]
    session = start(registry, "stub", cwd=tmp_path, plugin_files=False, output=output)
    output.attach(session)
    live = AcpLive(session, output)
    turn = asyncio.ensure_future(live.turn("!tool wait {}"))
    await asyncio.wait_for(running.wait(), 10)
    text = [{"type": "text", "text": "forget it"}]
    seen: list[int] = []

    async def request() -> dict[str, Any]:  # as the connection runs a request: a task
        answer = await live.prompt(text)
        seen.append(asyncio.current_task().cancelling())  # type: ignore[union-attr]
        return answer

    steering = asyncio.ensure_future(request())
    while not session.agent.steering.waiting:
        await asyncio.sleep(0)
    steering.cancel()  # `$/cancel_request`
    answer = await asyncio.wait_for(steering, 10)
    assert answer == {"stopReason": "cancelled", "_meta": {"elelem": {"steer": "withdrawn"}}}
    assert seen == [0]
    assert not steering.cancelled() and steering.cancelling() == 0
    gate.set()
    result = await asyncio.wait_for(turn, 10)
    assert result.stop_reason == "end_turn"
    await session.close()


async def test_a_cancelled_command_prompt_takes_its_cancel_back(tmp_path, monkeypatch) -> None:
    """The same for a slash command's prompt, answered `cancelled`."""
    monkeypatch.setenv("ELELEM_CHECKPOINTS", "0")
    registry = core_registry(entry_points=False).child()
    running = asyncio.Event()

    async def hang(session: Any, args: str | None) -> None:
        running.set()
        await asyncio.Event().wait()

    registry.plugin("test").command("hang", "never ends")(hang)
    output = AcpOutput(Sent())  # type: ignore[arg-type]
    session = start(registry, "stub", cwd=tmp_path, plugin_files=False, output=output)
    output.attach(session)
    live = AcpLive(session, output)
    seen: list[int] = []

    async def request() -> dict[str, Any]:
        answer = await live.prompt([{"type": "text", "text": "/hang"}])
        seen.append(asyncio.current_task().cancelling())  # type: ignore[union-attr]
        return answer

    command = asyncio.ensure_future(request())
    await asyncio.wait_for(running.wait(), 10)
    command.cancel()  # `$/cancel_request`
    assert await asyncio.wait_for(command, 10) == {"stopReason": "cancelled"}
    assert seen == [0] and not live.busy
    await session.close()
