from elelem_daemon.faces.terminal.repl import Repl
from elelem_daemon.io import NullInput


async def test_repl_skips_empty_lines_and_dispatches(session, output):
    session.input = NullInput(["", "   ", "/clear", "hi", "/exit", "never"])
    await Repl(session).run()
    assert output.calls[0] == ("say", ("elelem v0.1.0", "plain"))
    assert ("say", ("  → context cleared", "plain")) in output.calls
    assert [m["content"] for m in session.conversation] == ["hi", "done."]
    assert session.input._answers == ["never"]  # /exit ended the loop: the terminal's to do


async def test_ctrl_c_ends_the_turn_but_a_cancel_of_the_repl_goes_on_up(session):
    import asyncio

    from elelem_daemon.control.live import Live
    from elelem_daemon.faces.terminal.repl import turn

    live = Live(session)
    running = asyncio.ensure_future(turn(live, "!stream 1000 10"))
    await asyncio.sleep(0.1)
    live.cancel()  # what Ctrl-C does
    assert (await running).stop_reason == "cancelled"
    outer = asyncio.ensure_future(turn(live, "!stream 1000 10"))
    await asyncio.sleep(0.1)
    outer.cancel()  # the face itself is stopped (a signal handler, say)
    try:
        await outer
    except asyncio.CancelledError:
        pass
    assert outer.cancelled()
    assert session.conversation.last["content"].endswith("[cancelled]")
    assert not live.busy
