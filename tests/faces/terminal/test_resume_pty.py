"""`elelem chat --resume` under a real pty after two compactions (issues 37, 40): the
screen redraws every turn since the session began, each compaction marked where it
happened, and the chat goes on."""

from __future__ import annotations

import pytest

from .conftest import at_prompt

pytestmark = pytest.mark.e2e
MARK = "context compacted here"


def test_resume_redraws_every_turn_across_two_compactions(open_terminal):
    terminal = open_terminal(lines=60)
    for n, words in enumerate(["first words", "second words"], 1):
        # each line once the last one's answer is on screen (a line typed while a turn
        # runs waits for the prompt: type-ahead, another test's matter)
        terminal.line(f"!echo {words}")
        terminal.wait_for(f"\n{words}\n")  # the answer, not the typed line
        at_prompt(terminal)
        terminal.line("/compact")
        terminal.wait(lambda n=n: terminal.text().count("→ compacted:") == n, 30, "compacted")
        at_prompt(terminal)
    terminal.line("!echo third words")
    terminal.wait_for("\nthird words\n")
    at_prompt(terminal)
    terminal.send("\x04")  # Ctrl-D: the chat ends, the session stays stored
    assert terminal.exit_code() == 0
    again = open_terminal("chat", "--resume", lines=60)
    screen = again.text()
    assert screen.count(MARK) == 2, screen
    places = [
        screen.index("> !echo first words"),
        screen.index(MARK),
        screen.index("> !echo second words"),
        screen.rindex(MARK),
        screen.index("> !echo third words"),
    ]
    assert places == sorted(places), screen
    assert "> Context:" not in screen  # the summary is the model's, not a prompt typed
    again.line("!echo fourth words")
    again.wait_for("\nfourth words\n")
    at_prompt(again)
