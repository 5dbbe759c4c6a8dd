"""`/shell`'s transcript (builtins/shell_session.py): escape sequences and controls out,
carriage returns and backspaces applied, `script`'s header gone, capped to its end; an
Input without a terminal (the editor faces) says `/shell` is the terminal's."""

from __future__ import annotations

from elelem_daemon.builtins.shell_session import MAX_TRANSCRIPT, NO_TERMINAL, cleaned, message
from elelem_daemon.io import NullInput
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start


def test_cleaned_takes_out_what_acts_on_a_terminal() -> None:
    raw = (
        'Script started on 2026-12-01 18:00:00+00:00 [COMMAND="/bin/sh"]\r\n'
        "$ ls\x1b[31m red\x1b[0m\r\n"
        "\x1b]0;title\x07abcd\b\bXY\r\n"
        "progress 10%\rprogress 100%\r\n"
        "bell\x07 nul\x00 \x9b31m\ttab\r\n"
        'Script done on 2026-12-01 18:00:01+00:00 [COMMAND_EXIT_CODE="0"]\r\n'
    )
    assert cleaned(raw) == "$ ls red\nabXY\nprogress 100%\nbell nul 31m\ttab"


def test_message_is_fenced_and_capped_to_its_end() -> None:
    assert message("\x1b[0m \r\n") is None
    text = message("a ``` b")
    assert text is not None and "\n````\na ``` b\n````" in text
    long = message("x" * (MAX_TRANSCRIPT + 10) + "END")
    assert long is not None and "[13 characters cut]" in long and long.endswith("END\n```")


async def test_without_a_terminal_shell_says_so_and_keeps_nothing(tmp_path) -> None:
    session = start(
        core_registry(entry_points=False), cwd=tmp_path, plugin_files=False, input=NullInput()
    )
    assert (await session.command("/shell")).output == NO_TERMINAL
    assert len(session.conversation) == 0
    await session.close()


async def test_a_shell_transcript_is_kept_as_a_user_message(tmp_path) -> None:
    class Shell(NullInput):
        async def shell(self) -> str:
            return "$ echo hi\r\nhi\r\n$ exit\r\n"

    session = start(
        core_registry(entry_points=False), cwd=tmp_path, plugin_files=False, input=Shell()
    )
    assert (await session.command("/shell")).output == "  → shell transcript added (3 lines)"
    (kept,) = list(session.conversation)
    assert kept["role"] == "user" and kept["content"].endswith("```\n$ echo hi\nhi\n$ exit\n```")
    await session.close()


def test_shell_is_not_offered_where_there_is_no_terminal_to_lend():
    from elelem_daemon.faces.terminal.console import TerminalInput
    from elelem_daemon.plugins import core_registry
    from elelem_daemon.session import start

    editor = start(core_registry(entry_points=False), plugin_files=False)
    assert "/shell" not in editor.commands.names()
    terminal = start(core_registry(entry_points=False), plugin_files=False, input=TerminalInput())
    assert "/shell" in terminal.commands.names()
