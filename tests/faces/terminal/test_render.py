"""The terminal's pieces, one by one: what is made visible, where a streaming reply's
blocks end, how a tool call reads, the history file, the line reader, the answers a
permission question takes. (The whole face runs under a pty in test_pty.py.)"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import unicodedata

import pytest

from elelem_daemon.faces.terminal.console import TerminalOutput
from elelem_daemon.faces.terminal.lines import LineReader
from elelem_daemon.faces.terminal.markdown import Blocks, split
from elelem_daemon.faces.terminal.questions import KEYS, answer_of, keys_for
from elelem_daemon.faces.terminal.toolcalls import folded, header
from elelem_daemon.faces.terminal.visible import HIDDEN, visible, visible_line
from elelem_daemon.result import Result


def test_every_control_and_format_character_is_made_visible():
    """The rule covers Cc (but newline and tab), Cf (but the zero-width joiner), Zl,
    Zp and Cs, for every code point, and nothing else this Python knows (the list is
    Unicode 15's: an older database calls a few of its format characters unassigned)."""
    wanted = {"Cc", "Cf", "Zl", "Zp", "Cs"}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        category = unicodedata.category(char)
        hidden = bool(HIDDEN.fullmatch(char))
        if category in wanted and char not in "\n\t\u200d":
            assert hidden, f"U+{code:04X} ({category}) is not made visible"
        elif category != "Cn":
            assert not hidden, f"U+{code:04X} ({category}) is made visible"


def test_visible_forms():
    assert visible("a\x1b[31mb") == "a␛[31mb"
    assert visible("x\r\ny\rz") == "x\ny␍z"
    assert visible("\x7f\x00\t\n") == "␡␀\t\n"
    assert visible("\x9b\u202e\ufeff") == "<U+009B><U+202E><U+FEFF>"
    assert visible("👨\u200d👩") == "👨\u200d👩"
    assert visible("plain text, café") == "plain text, café"
    assert visible_line("two\nlines") == "two␤lines"


@pytest.mark.parametrize(
    "text, done",
    [
        ("one para", 0),
        ("one para\n", 0),
        ("one\n\ntwo", 5),
        ("one\n\ntwo\n\n", 10),
        ("```\ncode\n\nmore", 0),  # a blank line inside a fence ends nothing
        ("```\ncode\n\nmore\n```\n", 19),  # the closed fence ends the block
        ("```\ncode\n```", 0),  # the closing line is still arriving
        ("````\na\n```\nb\n````\nafter\n\nx", 25),
        ("~~~py\na\n~~~\n", 12),
    ],
)
def test_where_a_streaming_reply_s_finished_blocks_end(text, done):
    assert split(text) == done
    for size in (1, 2, 3, 7):  # streamed in pieces: the same blocks, each handed once
        blocks, finished = Blocks(), []
        for start in range(0, len(text), size):
            if piece := blocks.feed(text[start : start + size]):
                finished.append(piece)
        assert "".join(finished) == text[:done] and blocks.open == text[done:]


def test_a_tool_call_header():
    assert header({"name": "execute", "arguments": {"command": "bin/test"}}) == (
        "execute(bin/test)"
    )
    assert header({"name": "read", "arguments": {}}) == "read()"
    long = "x" * 80
    assert header({"name": "write", "arguments": {"path": "a.txt", "content": long}}) == (
        f"write(path=a.txt, content={'x' * 49}…)"
    )
    assert header({"name": "e", "arguments": {"n": 3, "on": True}}) == "e(n=3, on=true)"
    assert header({"name": "e", "arguments": {"c": "a\nb\x1b"}}) == "e(a␤b␛)"


def test_a_result_folded():
    ten = Result({"exit_status": 0, "content": "\n".join(map(str, range(10))) + "\n"})
    assert folded(ten) == (["0", "1", "2", "3", "… 6 more lines"], True, "")
    assert folded(Result({"exit_status": 2, "content": "no\n"})) == (["no"], False, "exit 2")
    failed = Result.failure("not found", path="x")
    assert folded(failed) == ([], False, "not found")
    diff = Result({"bytes": 3, "path": "a", "diff": "--- a\n+++ a\n+hi\n"})
    assert folded(diff)[0] == ["--- a", "+++ a", "+hi"]
    hostile = Result({"content": "\x1b]52;c;eA==\x07\tx"})
    assert folded(hostile)[0] == ["␛]52;c;eA==␇    x"]


def plain() -> tuple[TerminalOutput, io.StringIO]:
    stream = io.StringIO()
    return TerminalOutput(stream=stream, color=False), stream


def test_plain_output_streams_and_ends_thinking_on_its_own_line():
    output, stream = plain()
    output.waiting()
    output.thinking("hmm")
    output.reply("")  # a thinking-only reply
    output.say("next")
    assert stream.getvalue() == "hmm\nnext\n"


def test_plain_output_says_an_error_once():
    output, stream = plain()
    output.waiting()
    output.say("boom", "error")
    output.reply("Error: boom")  # the fetch's text: already said
    assert stream.getvalue() == "Error: boom\n"


def test_plain_output_indents_a_tasks_child_under_its_call():
    output, stream = plain()
    output.doing({"name": "task", "arguments": {"prompt": "look"}})
    child = output.nested("stub-1")
    child.saying("the child's own text is not printed")
    child.doing({"name": "read", "arguments": {"path": "a.txt"}})
    child.result({"name": "read"}, Result({"content": "one\ntwo", "ok": True}))
    child.say("a note\non two lines", "info")
    child.say("it broke", "error")
    output.result({"name": "task"}, Result({"result": "found", "ok": True}))
    assert stream.getvalue() == (
        "+ task(look)\n"
        "    + read(a.txt)\n"
        "      one\n"
        "      two\n"
        "      ✓\n"
        "    a note\n"
        "    on two lines\n"
        "    Error: it broke\n"
        '  {"result": "found", "ok": true}\n'
        "  ✓\n"
    )


def test_a_tasks_child_brings_back_the_spinner_of_the_call_it_was_nested_under():
    output = TerminalOutput(stream=io.StringIO(), color=True)
    assert output.screen is not None
    output.doing({"id": "c1", "name": "task", "arguments": {"prompt": "look"}})
    output.doing({"id": "c2", "name": "read", "arguments": {"path": "b.txt"}})
    child = output.nested("c1")  # not the call drawn last: the one named
    child.doing({"id": "k1", "name": "grep", "arguments": {"pattern": "x"}})
    child.result({"id": "k1", "name": "grep"}, Result({"matches": [], "ok": True}))
    assert output._running == "running task"
    output.result({"id": "c1", "name": "task"}, Result({"result": "found", "ok": True}))
    assert output.nested("c9").label is None  # an id never drawn: the call running, none
    output.doing({"id": "c3", "name": "task", "arguments": {"prompt": "again"}})
    assert output.nested("c3").label == "running task"


def test_a_reply_redrawn_alone_is_shown():
    output, stream = plain()
    output.reply("an old reply \x1b[8m")  # a resumed session's history: no fetch runs
    assert stream.getvalue() == "an old reply ␛[8m\n"


def test_rich_output_streams_blocks_and_makes_them_visible():
    stream = io.StringIO()
    output = TerminalOutput(stream=stream, color=True)
    assert output.screen is not None
    output.screen.console.width = 60
    output.waiting()
    output.saying("# Head\n\npara \x1b[8mhidden")
    output.saying(" more\n\n")
    output.reply("")
    text = stream.getvalue()
    assert "\x1b[8m" not in text and "␛[8mhidden more" in text
    assert "Head" in text


def test_a_long_open_block_is_previewed_as_its_visible_tail():
    stream = io.StringIO()
    output = TerminalOutput(stream=stream, color=True)
    assert output.screen is not None
    output.waiting()
    long = "word " * 5000 + "\x1b]52;c;eA==\x07end"  # one block, past PREVIEW characters
    for start in range(0, len(long), 100):
        output.saying(long[start : start + 100])
    assert output._open is not None and output._open.open == long
    output.reply("")
    text = stream.getvalue()
    assert "\x1b]52" not in text and "␛]52;c;eA==␇end" in text


def test_permission_answers():
    keys = keys_for(["allow", "deny", "always", "never"], {"kind": "permission"})
    assert keys == KEYS
    assert [answer_of(line, keys) for line in ("y", "n", "a", "N", "yes", "No", "ALWAYS")] == [
        "allow",
        "deny",
        "always",
        "never",
        "allow",
        "deny",
        "always",
    ]
    assert answer_of("x", keys) is None and answer_of("", keys) is None
    assert keys_for(["a", "b"], {"kind": "permission"}) is None
    assert keys_for(["allow", "deny"], {"kind": "question"}) is None


async def test_the_line_reader_reads_a_pipe_line_by_line():
    read, write = os.pipe()
    os.write(write, "one\ntwo\nthr".encode())
    reader = LineReader(os.fdopen(read))
    assert await reader.readline() == "one"
    assert await reader.readline() == "two"
    pending = asyncio.ensure_future(reader.readline())
    await asyncio.sleep(0.05)
    assert not pending.done()  # the rest of the line has not come
    os.write(write, "ee\n".encode())
    os.close(write)
    assert await asyncio.wait_for(pending, 5) == "three"
    assert await reader.readline() is None


async def test_a_pending_read_is_cancelled_without_a_thread():
    read, write = os.pipe()
    reader = LineReader(os.fdopen(read))
    pending = asyncio.ensure_future(reader.readline())
    await asyncio.sleep(0.05)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    os.close(write)


def test_the_history_is_one_private_bounded_file_per_project(tmp_path, monkeypatch):
    from elelem_daemon.faces.terminal import history

    monkeypatch.setenv("ELELEM_STATE_DIR", str(tmp_path / "state"))
    path = history.history_file(tmp_path / "my project")
    assert path.parent == tmp_path / "state" / "history"
    assert path.name.startswith("my_project-")
    assert history.history_file(tmp_path / "other") != path
    kept = history.ProjectHistory(path)
    kept.store_string("first")
    kept.store_string("two\nlines")
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    assert list(history.ProjectHistory(path).load_history_strings()) == ["two\nlines", "first"]
    monkeypatch.setattr(history, "MAX_BYTES", 200)
    for n in range(100):
        kept.store_string(f"entry {n}")
    loaded = list(history.ProjectHistory(path).load_history_strings())
    assert loaded[0] == "entry 99" and len(loaded) < 10
    assert path.stat().st_size <= 400  # cut down once it grew past twice the bound


def test_a_commands_markdown_in_plain_lines_shows_no_bold_markers():
    """Issue 33: piped, `/mcp` printed `- **files** (user, stdio): ready`."""
    output, stream = plain()
    output.say("- **files** (user, stdio): ready, 1 tools: files__read", "markdown")
    assert stream.getvalue() == "- files (user, stdio): ready, 1 tools: files__read\n"


def test_a_folded_diff_shows_its_changed_lines_first():
    text = "--- a.py\n+++ a.py\n@@ -1,5 +1,5 @@\n one\n two\n-three\n+THREE\n four\n---\n"
    diff = Result({"path": "a.py", "diff": text})
    assert folded(diff, key="ctrl+o") == (
        ["-three", "+THREE", "---", "… 6 more lines (ctrl+o shows it whole)"],
        True,
        "",
    )
    many = Result({"content": "\n".join(map(str, range(10)))})  # not a diff: as it comes
    assert folded(many)[0][:2] == ["0", "1"]
