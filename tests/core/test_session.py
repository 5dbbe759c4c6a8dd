import asyncio

from support.outputs import Scripted

from elelem_daemon.plugins import core_registry
from elelem_daemon.providers.stub import StubProvider
from elelem_daemon.session import start


def test_session_forwards_to_its_agent(session):
    agent = session.agent
    assert session.toolbox is agent.toolbox
    assert session.conversation is agent.conversation
    assert session.context == agent.context
    replacement = StubProvider("other")
    session.provider = replacement
    assert agent.provider is replacement and session.provider is replacement


async def test_the_last_turn_is_kept_with_its_outcome(session):
    assert session.last_turn is None
    result = await session.turn("!echo hi")
    assert session.last_turn is result and result.reply == "hi"


async def test_a_command_captures_what_it_says_and_nothing_else(session, output):
    session.provider = Scripted([{"type": "saying", "text": "a summary"}])
    result = await session.command("/compact")
    assert result.output == "  → compacted: 0 messages became 1"  # said by the command
    assert ("saying", "a summary") in output.calls  # the turn it ran streamed as usual
    assert all(kind != "say" for kind, _ in output.calls)
    session.output.say("after")
    assert output.calls[-1] == ("say", ("after", "plain"))  # the session's own Output again


class Closing:
    """A provider that records being closed."""

    name = "closing"

    def __init__(self, model=None) -> None:
        self.model = model or "m"
        self.closed = asyncio.Event()

    async def fetch(self, messages, tools):
        yield {"type": "saying", "text": "ok"}

    async def aclose(self) -> None:
        self.closed.set()


async def test_a_provider_is_closed_when_the_session_switches_or_closes(tmp_path):
    built: list[Closing] = []
    registry = core_registry(entry_points=False).child()
    registry.plugin("test").provider(
        "closing", lambda model=None: built.append(Closing(model)) or built[-1]
    )
    session = start(registry, "closing", cwd=tmp_path, plugin_files=False)
    session.switch(model="m2")
    await asyncio.wait_for(built[0].closed.wait(), 5)
    assert session.provider is built[1] and not built[1].closed.is_set()
    await session.close()
    assert built[1].closed.is_set()


async def test_a_provider_that_hangs_on_close_holds_the_close_for_a_bounded_time(
    tmp_path, monkeypatch
):
    import elelem_daemon.session as sessions

    class Hanging(Closing):
        async def aclose(self) -> None:
            await asyncio.sleep(3600)

    registry = core_registry(entry_points=False).child()
    registry.plugin("test").provider("hanging", Hanging)
    session = start(registry, "hanging", cwd=tmp_path, plugin_files=False)
    monkeypatch.setattr(sessions, "CLOSE_WAIT", 0.2)
    await asyncio.wait_for(session.close(), 5)  # not an hour


async def test_a_close_hook_that_hangs_holds_up_no_other_hook_nor_closer(tmp_path):
    registry = core_registry(entry_points=False).child()
    plugin = registry.plugin("test")
    ran: list[str] = []

    @plugin.on("close")
    async def hangs(session) -> None:
        await asyncio.sleep(3600)

    @plugin.on("close")
    def quick(session) -> None:
        ran.append("hook")

    session = start(registry, "stub", cwd=tmp_path, plugin_files=False)

    async def closer() -> None:
        ran.append("closer")

    session.closers.append(closer)
    await asyncio.wait_for(session.close(timeout=0.3), 5)  # not an hour
    assert sorted(ran) == ["closer", "hook"]
