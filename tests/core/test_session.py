import elelem_daemon
from elelem_daemon.faces.terminal.repl import Repl
from elelem_daemon.io import NullInput
from elelem_daemon.providers.stub import StubProvider


def test_session_forwards_to_its_agent(session):
    agent = session.agent
    assert session.toolbox is agent.toolbox
    assert session.conversation is agent.conversation
    assert session.context == agent.context
    replacement = StubProvider("other")
    session.provider = replacement
    assert agent.provider is replacement and session.provider is replacement


async def test_repl_skips_empty_lines_and_dispatches(session, output):
    session.input = NullInput(["", "   ", "/clear", "hi", "/exit", "never"])
    session.agent.input = session.input
    await Repl(session).run()
    assert output.calls[0] == ("say", ("elelem v0.1.0", "plain"))
    assert ("say", ("  → context cleared", "plain")) in output.calls
    assert [m["content"] for m in session.conversation] == ["hi", "done."]
    assert session.input._answers == ["never"]


def test_the_public_surface_is_pinned():
    assert elelem_daemon.__all__ == sorted(elelem_daemon.__all__)
    for name in elelem_daemon.__all__:
        assert getattr(elelem_daemon, name) is not None
