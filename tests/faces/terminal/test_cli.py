"""The terminal face, run as a real subprocess."""

import os
import re
import subprocess
import sys
from pathlib import Path


def elelem(*args, stdin="", env=None):
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from elelem_daemon.cli import main; sys.exit(main())",
            *args,
        ],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_chat_runs_a_stub_turn_and_shows_the_context(tmp_path):
    done = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "elelem"), "chat"],
        input="hi\n\n/context\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    system = lines[10]  # the environment block (context/environment.py) sizes it
    assert re.fullmatch(
        r"  1\. system: You are a terminal coding agent\.{4} \(~\d+ tokens\)", system
    )
    assert lines == [
        "elelem v0.1.0",
        "> hi",
        "considering the request",
        "let me check.",
        "+ read()",
        "  ✗ object at root is missing required properties: path",
        "considering the request",
        "done.",
        "> ",
        "> /context",
        system,
        "  2. user: hi (~1 tokens)",
        "  3. assistant: done. (~2 tokens)",
    ]


def test_exit_command_ends_the_chat(tmp_path):
    done = elelem("chat", stdin="/exit\nhi\n")
    assert done.returncode == 0
    assert "let me check." not in done.stdout


def test_ask_appends_piped_stdin_and_prints_only_the_reply():
    done = elelem("ask", "!echo", "summarise", stdin="file body")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "summarise\n\n```\nfile body\n```\n"


def test_ask_that_ends_in_an_error_exits_1_with_the_error_once_on_stderr():
    done = elelem("ask", "!fail boom", env={"ELELEM_LOG_LEVEL": ""})  # the log: to its file
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("boom") == 1
    assert "Error: boom\n" in done.stderr


def test_ask_takes_its_prompt_from_stdin_alone():
    done = elelem("ask", stdin="!echo from the pipe\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "from the pipe\n"


def test_ask_without_any_prompt_says_so():
    done = elelem("ask", stdin="")
    assert done.returncode == 1
    assert "elelem: ask: no prompt" in done.stderr


def test_ask_with_no_reply_fails():
    done = elelem("ask", "!echo")
    assert done.returncode == 1
    assert "elelem: no reply" in done.stderr


def test_unknown_provider_is_one_line_and_exit_1():
    done = elelem("chat", "-p", "nosuch")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        'elelem: unknown provider: "nosuch". Available: anthropic, ollama, openai, stub.'
    )


def test_unknown_command():
    done = elelem("frobnicate")
    assert done.returncode == 1 and done.stderr.strip() == "Unknown command: frobnicate"


def test_a_broken_project_plugin_costs_one_line(tmp_path):
    plugins = tmp_path / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "bad.py").write_text("def register(:\n")
    trusted = Path(os.environ["XDG_CONFIG_HOME"]) / "elelem" / "trusted"
    trusted.parent.mkdir(parents=True, exist_ok=True)
    trusted.write_text(f"{tmp_path.resolve()}\n")  # as a yes to the trust question keeps it
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from elelem_daemon.cli import main; sys.exit(main())",
            "chat",
        ],
        input="hi\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0
    assert f"elelem: failed to load plugin {plugins / 'bad.py'}: " in done.stderr
    assert "done." in done.stdout


def test_the_terminal_logs_to_a_file_unless_a_level_is_given(isolated_home):
    quiet = elelem("ask", "!fail boom", env={"ELELEM_LOG_LEVEL": ""})
    log = isolated_home / ".local" / "state" / "elelem" / "elelem.log"
    assert "agent: boom" in log.read_text() and "WARNING" not in quiet.stderr
    loud = elelem("ask", "--log-level", "warning", "!fail boom")
    assert "elelem WARNING elelem_daemon.agent: agent: boom" in loud.stderr


def imported(*args, stdin=""):
    """The top-level packages `python -X importtime -m elelem_daemon ARGS` imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "elelem_daemon", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ELELEM_PROVIDER": "stub"},
    )
    rows = [line.split("|")[-1] for line in done.stderr.splitlines() if "import time:" in line]
    return {row.strip().split(".")[0] for row in rows}


def test_the_editor_faces_do_not_pay_for_the_terminal_s_libraries():
    for args in (["daemon"], ["daemon", "--acp"]):
        modules = imported(*args)
        assert "elelem_daemon" in modules
        assert not modules & {"rich", "prompt_toolkit", "pygments", "markdown_it"}, args


def test_a_piped_ask_does_not_load_the_line_editor_or_rich():
    modules = imported("ask", "!echo hi")
    assert "elelem_daemon" in modules
    assert not modules & {"rich", "prompt_toolkit"}


def run_in(folder, *args, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "elelem_daemon", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")},
            "ELELEM_PROVIDER": "stub",
        },
    )


def test_ask_resolves_at_mentions_as_every_face_does(tmp_path):
    (tmp_path / "notes.md").write_text("# notes\n")
    done = run_in(tmp_path, "ask", "!echo see @notes.md")  # the stub echoes what it read
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        'see @notes.md\n\n<attachment type="file" path="notes.md">\n# notes\n</attachment>\n'
    )


def test_chat_prints_a_refused_mention_and_goes_on(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"\x7fELF\0\0binary")
    done = run_in(tmp_path, "chat", stdin="look at @a.bin\n!echo still here\n/context\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Error: @a.bin (file): a.bin is a binary file, not text" in lines
    assert "still here" in lines
    assert "  2. user: !echo still here (~4 tokens)" in lines  # the refused line was not kept


def test_ask_with_a_refused_mention_fails_clearly(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"\x7fELF\0\0binary")
    done = run_in(tmp_path, "ask", "look at @a.bin")
    assert done.returncode == 1
    assert done.stderr == "elelem: @a.bin (file): a.bin is a binary file, not text\n"
    assert done.stdout == ""
