"""The terminal face, run as a real subprocess."""

import os
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
    assert done.stdout.splitlines() == [
        "elelem v0.1.0",
        "> hi",
        "considering the request",
        "let me check.",
        "+ read({})",
        "  ! object at root is missing required properties: path",
        "considering the request",
        "done.",
        "> ",
        "> /context",
        "  1. system: You are a terminal coding agent.",
        "  2. user: hi",
        "  3. assistant: done.",
    ]


def test_exit_command_ends_the_chat(tmp_path):
    done = elelem("chat", stdin="/exit\nhi\n")
    assert done.returncode == 0
    assert "let me check." not in done.stdout


def test_ask_appends_piped_stdin_and_prints_only_the_reply():
    done = elelem("ask", "!echo", "summarise", stdin="file body")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "summarise\n\n```\nfile body\n```\n"


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
