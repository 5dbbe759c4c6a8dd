"""The terminal face under a real pty, read as a person reads it (a VT100 screen):
streaming, Ctrl-C, the line editor, the permission question (toolchain.md §10).

Bounds here are the ones issue 18 states (the first token within 0.5 s, a killed
`sleep` gone within 1 s); every other wait is on a condition, generously bounded.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from support.processes import alive
from support.terminal import Terminal

from .conftest import at_prompt

pytestmark = pytest.mark.e2e


def last_output(terminal: Terminal, line: str) -> str:
    """What the last run of `line` printed, up to the next prompt."""
    return terminal.text().rsplit(f"> {line}\n", 1)[1].split("\n>", 1)[0]


def allow_execute(home: Path) -> None:
    (home / ".config" / "elelem" / "permissions").write_text("execute allow\n")


def test_a_streamed_reply_shows_token_by_token(open_terminal):
    terminal = open_terminal()
    terminal.line("!stream 50 50")
    started = time.monotonic()
    terminal.wait_for("tok0", 10)
    first = time.monotonic() - started
    before = len(terminal.states)
    terminal.wait_for("tok49", 30)
    progressive = len(terminal.states) - before
    at_prompt(terminal)
    assert first < 0.5, f"the first token took {first:.2f} s"
    assert progressive >= 5, f"only {progressive} screen states between tok0 and tok49"
    assert "[cancelled]" not in terminal.text()


def test_ctrl_c_mid_stream_cancels_and_the_next_turn_works(open_terminal):
    terminal = open_terminal()
    terminal.line("!stream 400 20")
    terminal.wait_for("tok5")
    terminal.send("\x03")
    at_prompt(terminal, 10)
    lines = terminal.lines()
    assert "[cancelled]" in lines  # on its own line
    assert "tok399" not in terminal.text()
    terminal.line("!echo second turn")
    terminal.wait_for("second turn\n")
    at_prompt(terminal)
    terminal.line("/context")
    terminal.wait_for("5. assistant: second turn")
    assert "3. assistant: tok0 tok1" in terminal.text()
    at_prompt(terminal)
    terminal.line("/context 3")
    terminal.wait(
        lambda: (
            terminal.text().rstrip().endswith("[cancelled]")
            or ("[cancelled]\n>" in terminal.text())
        ),
        10,
        "the kept text",
    )


def test_ctrl_c_kills_a_running_command_within_a_second(open_terminal, home):
    allow_execute(home)
    terminal = open_terminal()
    terminal.line('!tool execute {"command": "sleep 30.18"}')
    end = time.monotonic() + 20
    while not alive(["sleep", "30.18"]):
        assert time.monotonic() < end, terminal.text()
        terminal.pump(0.05)
    terminal.wait_for("running execute")
    terminal.send("\x03")
    sent = time.monotonic()
    while alive(["sleep", "30.18"]) and time.monotonic() - sent < 5:
        time.sleep(0.02)
    gone = time.monotonic() - sent
    assert gone < 1.0, f"the sleep outlived Ctrl-C by {gone:.2f} s"
    at_prompt(terminal, 10)
    assert "[cancelled]" in terminal.lines()


def test_ctrl_c_twice_at_the_prompt_leaves_with_0(open_terminal):
    terminal = open_terminal()
    terminal.send("some words")
    terminal.wait_for("> some words")
    terminal.send("\x03")
    at_prompt(terminal)  # the first press clears the line
    terminal.wait_for("Ctrl-C again to leave")
    terminal.send("\x03")
    assert terminal.exit_code() == 0


def test_ctrl_c_far_apart_only_clears(open_terminal):
    terminal = open_terminal()
    terminal.send("\x03")
    terminal.wait_for("Ctrl-C again to leave")
    terminal.wait(lambda: "Ctrl-C again" not in terminal.text(), 10, "the hint to go")
    terminal.send("\x03")
    terminal.wait_for("Ctrl-C again to leave")
    assert terminal.child.isalive()
    terminal.send("\x04")
    assert terminal.exit_code() == 0


def test_ctrl_d_leaves_with_0_on_a_line_of_its_own(open_terminal):
    terminal = open_terminal()
    terminal.send("\x04")
    assert terminal.exit_code() == 0
    assert terminal.raw.endswith(b"\n") or terminal.raw.endswith(b"\r\n")


def test_tab_completes_a_command_and_its_argument(open_terminal):
    terminal = open_terminal()
    terminal.send("/con")
    terminal.wait_for("/context")  # the menu opens while a command is typed
    terminal.send("\t")
    terminal.wait(lambda: terminal.prompt_line() == "> /context", 10, "> /context")
    terminal.send(" j\t")
    terminal.wait(lambda: terminal.prompt_line() == "> /context json", 10, "the argument")


def test_tab_completes_a_path(open_terminal, project):
    (project / "notes-about-things.md").write_text("x")
    terminal = open_terminal()
    terminal.send("read @notes-ab\t")
    terminal.wait(lambda: terminal.prompt_line() == "> read @notes-about-things.md", 10, "the path")


def test_history_survives_a_restart_and_ctrl_r_finds_it(open_terminal):
    first = open_terminal()
    first.line("!echo remembered line")
    first.wait_for("remembered line\n")
    at_prompt(first)
    first.line("!echo later")
    first.wait_for("later\n")
    at_prompt(first)
    first.send("\x04")
    assert first.exit_code() == 0
    second = open_terminal()
    second.send("\x1b[A")  # Up
    second.wait(lambda: second.prompt_line() == "> !echo later", 10, "the last line")
    second.send("\x03")
    at_prompt(second)
    second.send("\x12remem")  # Ctrl-R, then part of the older line
    second.wait_for("!echo remembered line")
    second.send("\r")  # accept the search, then run it
    second.send("\r")
    second.wait(lambda: second.text().count("remembered line") >= 2, 10, "the rerun")


def test_the_status_line_shows_provider_model_and_tokens(open_terminal):
    terminal = open_terminal("chat", "-m", "tiny")
    terminal.wait(lambda: terminal.lines()[-1].strip().startswith("stub · tiny"), 10, "status")
    assert terminal.lines()[-1].strip() == "stub · tiny · 0 messages"
    terminal.line("!echo hi")
    terminal.wait(lambda: "2 messages" in terminal.lines()[-1], 10, "the status to move")


def test_a_trailing_backslash_or_alt_enter_continues_the_prompt(open_terminal):
    terminal = open_terminal()
    terminal.send("first\\\r")
    terminal.send("second\x1b\r")
    terminal.send("third\r")
    terminal.wait_for("third")
    at_prompt(terminal)
    terminal.line("/context 2")
    terminal.wait(
        lambda: (
            terminal.text().endswith("first\nsecond\nthird\n>")
            or ("first\nsecond\nthird\n>" in terminal.text())
        ),
        10,
        "the three lines as one prompt",
    )


def test_the_permission_question_takes_one_key_and_asks_again(open_terminal, project):
    terminal = open_terminal()
    terminal.line('!tool execute {"command": "echo ran > marker"}')
    terminal.wait_for("y allow · n deny · a always · N never")
    assert "? Allow execute: echo ran > marker?" in terminal.text()
    terminal.send("x")
    terminal.wait_for("answer y (allow), n (deny), a (always) or N (never)")
    terminal.send("n")
    terminal.wait_for("✗ User denied permission: execute")
    at_prompt(terminal)
    assert not (project / "marker").exists()
    asked = terminal.text().count("never ›")  # the first question may still be on screen
    terminal.line('!tool execute {"command": "echo ran > marker"}')
    terminal.wait(lambda: terminal.text().count("never ›") > asked, what="the second question")
    terminal.send("y")
    terminal.wait_for("✓")
    at_prompt(terminal)
    assert (project / "marker").read_text() == "ran\n"


def test_ctrl_c_at_the_permission_question_answers_nothing_and_cancels(open_terminal, project):
    terminal = open_terminal()
    terminal.line('!tool execute {"command": "echo ran > marker"}')
    terminal.wait_for("never ›")
    terminal.send("\x03")
    at_prompt(terminal, 10)
    assert "[cancelled]" in terminal.lines()
    assert not (project / "marker").exists()
    terminal.line("!echo still here")
    terminal.wait_for("still here\n")


def test_a_tool_call_is_a_header_then_its_output_folded(open_terminal, home):
    allow_execute(home)
    terminal = open_terminal()
    command = "seq 1 9; echo " + "x" * 80
    terminal.line("!tool execute " + json.dumps({"command": command}))
    terminal.wait_for("✓")
    at_prompt(terminal)
    lines = terminal.lines()
    header = next(line for line in lines if line.startswith("+ execute("))
    assert header == f"+ execute({command[:49]}…)"
    start = lines.index(header)
    assert lines[start + 1 : start + 7] == [
        "  1",
        "  2",
        "  3",
        "  4",
        "  … 6 more lines (ctrl+o shows it whole)",
        "  ✓",
    ]


def test_a_failed_turn_says_its_error_once(open_terminal):
    terminal = open_terminal()
    terminal.line("!fail the model is down")
    terminal.wait_for("Error: the model is down")
    at_prompt(terminal)
    assert terminal.text().count("the model is down") == 2  # the typed line, the error
    assert "WARNING" not in terminal.text()  # the log went to its file


def test_compact_with_a_dead_provider_changes_nothing(open_terminal, home):
    import socket

    with socket.socket() as s:  # a port nothing listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "OPENAI_API_KEY": "none",
        "ELELEM_RETRIES": "0",
    }
    terminal = open_terminal("chat", env=env)
    for word in ("one", "two"):
        terminal.line(f"!echo {word}")
        terminal.wait_for(f"{word}\n")
        at_prompt(terminal)
    terminal.line("/provider openai")
    terminal.wait_for("switched to openai")
    at_prompt(terminal)
    stored = next((home / ".local" / "state").rglob("*.jsonl"))
    before = stored.read_bytes()
    terminal.line("/context")
    terminal.wait_for("5. assistant: two")
    at_prompt(terminal)
    context = last_output(terminal, "/context")
    terminal.line("/compact")
    terminal.wait_for("compact failed: the conversation is kept (/clear starts over)")
    at_prompt(terminal)
    assert terminal.text().count("cannot connect to http://127.0.0.1:") == 1
    terminal.line("/context")
    terminal.wait(lambda: terminal.text().count("5. assistant: two") == 2, 10, "the context")
    at_prompt(terminal)
    assert last_output(terminal, "/context") == context
    assert stored.read_bytes() == before


def test_a_script_reads_lines_with_a_dash_even_on_a_terminal(open_terminal):
    terminal = open_terminal("chat", "-")
    terminal.line("!echo from a line")
    terminal.wait_for("from a line\n")
    terminal.wait(lambda: terminal.prompt_line() == ">", 10, "the next prompt")
    terminal.send("\x04")
    assert terminal.exit_code() == 0


def test_ask_on_a_terminal_is_cancelled_by_ctrl_c_with_130(home, project):
    environ = {"HOME": str(home), "XDG_STATE_HOME": str(home / ".local" / "state")}
    terminal = Terminal("ask", "!stream 400 20", cwd=project, env=environ)
    try:
        terminal.wait_for("tok3")
        terminal.send("\x03")
        assert terminal.exit_code() == 130
        assert "[cancelled]" in terminal.lines()
    finally:
        terminal.close()


def events(*steps) -> str:
    return "!events " + json.dumps(list(steps))


SLOW = """
import asyncio


class Slow:
    name = "slow"
    model = "slow-1"

    async def fetch(self, messages, tools):
        await asyncio.sleep(1.5)
        yield {"type": "saying", "text": "at last"}


def register(plugin):
    plugin.provider("slow", lambda model=None: Slow())
"""


def test_a_spinner_counts_the_wait_for_the_first_token(open_terminal, home):
    plugins = home / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "slow.py").write_text(SLOW)
    terminal = open_terminal("chat", "-p", "slow")
    terminal.line("hello")
    terminal.wait_for("waiting for the model 0.")
    terminal.wait_for("waiting for the model 1.")  # its clock moves
    terminal.wait_for("at last")
    at_prompt(terminal)
    assert "waiting for the model" not in terminal.text()  # cleared by the first output


def test_the_status_line_counts_the_last_turn_s_tokens(open_terminal):
    terminal = open_terminal()
    terminal.line(
        events(
            {"type": "saying", "text": "ok"},
            {"type": "usage", "input_tokens": 12, "output_tokens": 3},
        )
    )
    terminal.wait(lambda: "12 in, 3 out" in terminal.lines()[-1], 10, "the tokens")
    assert terminal.lines()[-1].strip() == "stub · stub · 15/? ctx · 12 in, 3 out · 2 messages"


def test_the_status_line_shows_the_context_the_cache_and_the_cost_and_cost_sums_them(
    open_terminal, home
):
    config = home / ".config" / "elelem"
    config.mkdir(parents=True, exist_ok=True)
    prices = "[prices.stub]\ninput = 1000\noutput = 2000\ncache_read = 100\n"
    (config / "config.toml").write_text(prices)
    terminal = open_terminal(env={"ELELEM_CONTEXT_WINDOW": "1000"})
    usage = {"type": "usage", "input_tokens": 12, "output_tokens": 3, "cache_read_tokens": 8}
    terminal.line(events({"type": "saying", "text": "ok"}, usage))
    terminal.wait(lambda: "$" in terminal.lines()[-1], 10, "the cost")
    assert terminal.lines()[-1].strip() == (  # 4 x 1000 + 8 x 100 + 3 x 2000 per million
        "stub · stub · 15/1.0k ctx (1%) · 12 in (8 cached), 3 out · $0.0108 · 2 messages"
    )
    terminal.line(events({"type": "saying", "text": "ok"}, usage))
    terminal.wait(lambda: "$0.0216" in terminal.lines()[-1], 10, "the session's cost")
    terminal.line("/cost")
    terminal.wait_for("  cost: $0.0216 (estimated)")
    assert "  input: 24 tokens (16 read from the cache)" in terminal.lines()
    assert "  context: 15 tokens of 1,000 (1%)" in terminal.lines()


def test_a_reply_cut_off_by_the_token_limit_says_so(open_terminal):
    terminal = open_terminal()
    terminal.line(
        events({"type": "saying", "text": "half a rep"}, {"type": "stop", "reason": "max_tokens"})
    )
    terminal.wait_for("[cut off: the reply reached the model's token limit]")
    at_prompt(terminal)
    assert "half a rep" in terminal.lines()


def test_the_model_s_question_takes_a_line_and_ctrl_c_cancels_it(open_terminal):
    terminal = open_terminal()
    terminal.line('!tool interview {"question": "Which name?", "options": ["Ada", "Bob"]}')
    terminal.wait_for("? Which name?")
    terminal.wait_for("[Ada/Bob] ›")
    terminal.line("Ada")
    terminal.wait_for("✓")
    at_prompt(terminal)
    terminal.line('!tool interview {"question": "Again?"}')
    terminal.wait_for("? Again?")
    terminal.send("\x03")
    at_prompt(terminal, 10)
    assert terminal.lines().count("[cancelled]") == 1
    assert terminal.lines().count("done.") == 1  # the turn stopped: no round after it


def test_thinking_streams_italic_and_a_thinking_only_reply_ends_its_line(open_terminal):
    terminal = open_terminal()
    terminal.line(
        events(
            {"type": "thinking", "text": "weighing "},
            300,
            {"type": "thinking", "text": "the options"},
        )
    )
    terminal.wait_for("considering the requestweighing")  # streamed: the second part is late
    assert "weighing the options" not in terminal.text()
    terminal.wait_for("weighing the options")
    at_prompt(terminal)  # the next prompt is on its own line, not glued to the thought
    thought = "considering the requestweighing the options"
    row = terminal.lines().index(thought)
    assert all(terminal.screen.buffer[row][x].italics for x in range(len(thought)))
    assert terminal.lines()[row + 1] == ">"
