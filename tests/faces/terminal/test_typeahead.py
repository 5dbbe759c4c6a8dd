"""What a line typed during a turn becomes (faces/terminal/typeahead.py): escape
sequences and control keys ignored, backspace and Ctrl-U applied, a bounded line; a
slash command or a refused steer waits for the prompt, nothing typed is lost."""

from __future__ import annotations

from support.outputs import SpyOutput

from elelem_daemon.base.errors import NotRunning
from elelem_daemon.faces.terminal.typeahead import TypeAhead
from elelem_daemon.turns.steering import MAX_TEXT


class Running:
    """A session whose turn takes steers (or refuses them, once `over`)."""

    def __init__(self) -> None:
        self.output = SpyOutput()
        self.steers: list[str] = []
        self.over = False

    def steer(self, text: str) -> None:
        if self.over:
            raise NotRunning("no turn is running: send the text as a turn")
        self.steers.append(text)


def test_keys_become_a_steer() -> None:
    session = Running()
    ahead = TypeAhead(session)  # type: ignore[arg-type]
    ahead.feed("hel\x1b[Dlo\x1bOP wor\x7f\x7forld\x07\x1b[1;5C\r")
    ahead.feed("gone\x15kept\n")
    ahead.feed("/steer  by name  \r   \r/steer\r")
    assert session.steers == ["hello world", "kept", "by name"]
    said = [text for text, _ in session.output.of("say")]
    assert said == [
        "steer queued: hello world",
        "steer queued: kept",
        "steer queued: by name",
        "/steer TEXT: TEXT goes to the running turn",
    ]


def test_commands_refused_steers_and_the_unfinished_line_wait_for_the_prompt() -> None:
    session = Running()
    ahead = TypeAhead(session)  # type: ignore[arg-type]
    ahead.feed("/help\r")
    session.over = True
    ahead.feed("too late\r")
    ahead.feed("half")
    assert session.steers == []
    assert ahead.leftover() == "/help\ntoo late\nhalf"
    assert ahead.leftover() == ""
    said = [text for text, _ in session.output.of("say")]
    assert said[0] == "commands wait for the prompt: /help"
    assert said[1].startswith("no turn is running") and "waits for the prompt" in said[1]


def test_a_line_is_bounded() -> None:
    session = Running()
    ahead = TypeAhead(session)  # type: ignore[arg-type]
    ahead.feed("x" * (MAX_TEXT + 100) + "\r")
    assert session.steers == ["x" * MAX_TEXT]
