from elelem_daemon.faces.terminal.repl import Repl
from elelem_daemon.io import NullInput


async def test_repl_skips_empty_lines_and_dispatches(session, output):
    session.input = NullInput(["", "   ", "/clear", "hi", "/exit", "never"])
    await Repl(session).run()
    assert output.calls[0] == ("say", ("elelem v0.1.0", "plain"))
    assert ("say", ("  → context cleared", "plain")) in output.calls
    assert [m["content"] for m in session.conversation] == ["hi", "done."]
    assert session.input._answers == ["never"]  # /exit ended the loop: the terminal's to do
