"""The permission policy: every outcome gives the documented tool result."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.vetting import confirm

from elelem_daemon.builtins.permissions import NO_ANSWER, parse
from elelem_daemon.faces.terminal.console import TerminalInput, painted_diff
from elelem_daemon.io import NullInput, NullOutput, ask
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path


@pytest.fixture(scope="module")
def registry():
    return core_registry(entry_points=False)


class Asked(NullInput):
    """Scripted answers; remembers every question and its details."""

    def __init__(self, answers: list[str | None] = ()) -> None:
        super().__init__(answers)
        self.questions: list[tuple[str, list[str] | None, dict[str, Any]]] = []

    async def ask(self, prompt: str, options: list[str] | None = None, **details: Any):
        self.questions.append((prompt, options, details))
        return await super().ask(prompt, options, **details)


def user_rules(isolated: Path, text: str) -> None:
    path = isolated / "xdg_config_home" / "elelem" / "permissions"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    confirm()  # the user's own edit, confirmed (safety/vetted.py)


def project_rules(text: str) -> None:
    path = Path.cwd() / ".agents" / "permissions"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def session(registry, answers=(), **kw):
    asked = Asked(list(answers))
    return start(registry, plugin_files=False, input=asked, **kw), asked


ECHO = {"command": "echo ran > marker"}


async def test_allow_runs_without_asking(registry):
    s, asked = session(registry, ["deny"])
    Path("a.txt").write_text("hello")
    result = await s.toolbox.run("read", {"path": "a.txt"})
    assert result.to_dict() == {"content": "hello", "path": "a.txt", "ok": True}
    assert asked.questions == []


async def test_ask_then_yes_runs_the_tool(registry):
    s, asked = session(registry, ["allow"])
    result = await s.toolbox.run("execute", ECHO)
    assert result.ok and Path("marker").read_text() == "ran\n"
    prompt, options, details = asked.questions[0]
    assert prompt == "Allow execute: echo ran > marker?"
    assert options == ["allow", "deny", "always", "never"]
    assert details == {"kind": "permission", "tool": {"name": "execute", "arguments": ECHO}}


@pytest.mark.parametrize("answer", ["yes", "y", " Allow "])
async def test_terminal_style_yes_answers_allow(registry, answer):
    s, _ = session(registry, [answer])
    assert (await s.toolbox.run("execute", ECHO)).ok


@pytest.mark.parametrize("answer", ["deny", "no", "", "maybe"])
async def test_ask_then_no_is_a_user_denial(registry, answer):
    s, _ = session(registry, [answer])
    result = await s.toolbox.run("execute", ECHO)
    assert result.to_dict() == {
        "error": "User denied permission: execute",
        "name": "execute",
        "args": ECHO,
        "ok": False,
    }
    assert not Path("marker").exists()


async def test_ask_with_no_one_to_answer_is_denied_and_says_why(registry):
    s, asked = session(registry, [])  # like a client without capabilities.input.ask
    result = await s.toolbox.run("execute", ECHO)
    assert result.to_dict() == {
        "error": f"Permission denied: execute ({NO_ANSWER})",
        "name": "execute",
        "args": ECHO,
        "ok": False,
    }
    assert len(asked.questions) == 1 and not Path("marker").exists()


async def test_deny_refuses_without_asking(registry, isolated):
    user_rules(isolated, "# no shell for the agent\nexecute deny\n")
    s, asked = session(registry, ["allow"])
    result = await s.toolbox.run("execute", ECHO)
    assert result.to_dict() == {
        "error": "Permission denied: execute",
        "name": "execute",
        "args": ECHO,
        "ok": False,
    }
    assert asked.questions == [] and not Path("marker").exists()


async def test_always_allows_the_tool_for_the_rest_of_the_session(registry):
    s, asked = session(registry, ["always"])
    assert (await s.toolbox.run("execute", ECHO)).ok
    assert (await s.toolbox.run("execute", {"command": "true"})).ok
    await s.command("/reload")
    assert (await s.toolbox.run("bash", {"command": "true"})).ok
    assert len(asked.questions) == 1
    fresh, asked_again = session(registry, [])
    assert not (await fresh.toolbox.run("execute", ECHO)).ok  # only that session
    assert len(asked_again.questions) == 1


async def test_never_denies_the_tool_for_the_rest_of_the_session(registry):
    s, asked = session(registry, ["never"])
    first = await s.toolbox.run("execute", ECHO)
    assert first.error == "User denied permission: execute"
    await s.command("/reload")
    again = await s.toolbox.run("bash", {"command": "true"})
    assert again.error == "User denied permission: execute"
    assert len(asked.questions) == 1 and not Path("marker").exists()


async def test_write_and_edit_ask_only_outside_the_cwd_and_show_the_diff(registry, isolated):
    s, asked = session(registry, [None, "allow"])
    inside = await s.toolbox.run("write", {"path": "sub/in.txt", "content": "x\n"})
    assert inside.ok and asked.questions == []
    outside = {"path": "../outside.txt", "content": "new\n"}
    result = await s.toolbox.run("write", outside)
    assert result.payload["error"] == f"Permission denied: write ({NO_ANSWER})"
    assert not (isolated / "outside.txt").exists()
    prompt, _, details = asked.questions[0]
    assert prompt == "Allow write: ../outside.txt?"
    assert details["tool"] == {
        "name": "write",
        "arguments": outside,
        "diff": "--- /dev/null\n+++ ../outside.txt\n@@ -0,0 +1 @@\n+new\n",
    }
    assert (await s.toolbox.run("write", outside)).ok
    (isolated / "outside.txt").write_text("a\nb\n")
    edit = {"path": str(isolated / "outside.txt"), "old": "b", "new": "c"}
    s2, asked2 = session(registry, ["allow"])
    assert (await s2.toolbox.run("edit", edit)).ok
    assert asked2.questions[0][2]["tool"]["diff"].endswith(" a\n-b\n+c\n")


async def test_a_symlink_out_of_the_cwd_counts_as_outside(registry, isolated):
    (isolated / "elsewhere").mkdir()
    Path("link").symlink_to(isolated / "elsewhere")
    s, asked = session(registry, [])
    result = await s.toolbox.run("write", {"path": "link/x.txt", "content": "x"})
    assert result.payload["error"] == f"Permission denied: write ({NO_ANSWER})"
    assert len(asked.questions) == 1 and not (isolated / "elsewhere" / "x.txt").exists()


async def test_project_rules_may_only_tighten_and_need_trust(registry, isolated):
    user_rules(isolated, "read deny\nlist allow\n")
    project_rules("read allow\nglob ask\nlist deny\n")
    Path("a.txt").write_text("hi")
    trusted, _ = session(registry, [])
    denied = await trusted.toolbox.run("read", {"path": "a.txt"})  # the project cannot allow
    assert denied.payload["error"] == "Permission denied: read"
    assert not (await trusted.toolbox.run("glob", {"pattern": "*"})).ok  # it can ask
    assert (await trusted.toolbox.run("list", {})).payload["error"] == "Permission denied: list"
    untrusted, _ = session(registry, [], project=False)
    denied = await untrusted.toolbox.run("read", {"path": "a.txt"})
    assert denied.payload["error"] == "Permission denied: read"
    assert (await untrusted.toolbox.run("glob", {"pattern": "*"})).ok


def test_a_project_cannot_loosen_a_tools_own_default(isolated):
    """An MCP tool asks by default (its `permission`); the project's `allow` cannot
    change that, its `deny` can; the user's `allow` can."""
    from elelem_daemon.builtins.permissions import Policy

    user_rules(isolated, "")
    project_rules("demo__add allow\ndemo__rm deny\n")
    policy = Policy.load(Path.cwd(), project=True)
    assert policy.rule("demo__add", default="ask") == "ask"
    assert policy.rule("demo__rm", default="ask") == "deny"
    assert policy.rule("read", default="allow") == "ask-outside"
    user_rules(isolated, "demo__* allow\n")
    policy = Policy.load(Path.cwd(), project=True)
    assert policy.rule("demo__add", default="ask") == "allow"
    assert policy.rule("demo__rm", default="ask") == "deny"


async def test_patterns_are_globs_or_aliases_and_the_last_match_wins(registry, isolated):
    user_rules(isolated, "* ask\nread allow\nbash deny\n")
    s, _ = session(registry, [])
    Path("a.txt").write_text("hi")
    assert (await s.toolbox.run("read", {"path": "a.txt"})).ok
    assert not (await s.toolbox.run("list", {})).ok  # * ask, no answer
    result = await s.toolbox.run("execute", ECHO)
    assert result.payload["error"] == "Permission denied: execute"


def test_bad_lines_are_reported_and_ask(capsys):
    rules, problems = parse("execute alow\n\nread\nwrite allow please\nedit deny # ok\n", "f")
    assert [(r.pattern, r.rule, r.where) for r in rules] == [
        ("execute", "ask", "f:1"),
        ("read", "ask", "f:3"),
        ("write", "ask", "f:4"),
        ("edit", "deny", "f:5"),
    ]
    assert problems[0] == (
        "f:1: expected `TOOL RULE` or `TOOL:SUBJECT RULE` with RULE one of allow, review, ask, "
        "deny, ask-outside; "
        "got 'execute alow', so execute will ask"
    )
    assert len(problems) == 3


async def test_a_bad_file_is_reported_on_stderr_at_start(registry, isolated, capsys):
    user_rules(isolated, "read nope\n")
    s, _ = session(registry, [])
    assert "permissions: " in capsys.readouterr().err
    assert not (await s.toolbox.run("read", {"path": "x"})).ok


async def test_the_model_reads_the_refusal_in_a_whole_turn(registry):
    seen: list[dict] = []

    class Results(NullOutput):
        def result(self, call, result):
            seen.append(result.to_dict())

    s = start(registry, plugin_files=False, output=Results())
    assert (await s.turn('!tool execute {"command":"true"}')).reply == "done."
    assert seen[0]["error"] == f"Permission denied: execute ({NO_ANSWER})"


async def test_an_input_with_the_old_ask_signature_still_works(registry):
    class Old:
        async def ask(self, prompt, options=None):
            return "allow"

        async def readline(self, prompt="> "):
            return None

    assert await ask(Old(), "q?", ["a"], kind="permission", tool={}) == "allow"
    s = start(registry, plugin_files=False, input=Old())
    assert (await s.toolbox.run("execute", ECHO)).ok


async def test_the_terminal_asks_with_the_diff_on_screen(capsys):
    terminal = TerminalInput(stream=io.StringIO("always\n"))
    tool = {"name": "write", "arguments": {}, "diff": "--- /dev/null\n+++ x\n+hi\n"}
    answer = await terminal.ask("Allow write: x?", ["allow", "deny", "always"], tool=tool)
    assert answer == "always"
    out = capsys.readouterr().out
    assert out == "--- /dev/null\n+++ x\n+hi\nAllow write: x? [allow/deny/always] always\n"


def test_the_terminal_paints_the_diff_when_it_is_a_terminal():
    diff = "--- a\n+++ a\n@@ -1 +1 @@\n-old\n+new\n same"
    assert painted_diff(diff, False) == diff
    assert painted_diff(diff, True).split("\n") == [
        "--- a",
        "+++ a",
        "\033[36m@@ -1 +1 @@\033[0m",
        "\033[31m-old\033[0m",
        "\033[32m+new\033[0m",
        " same",
    ]


def test_the_terminal_repl_asks_and_runs_on_yes(isolated):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    script = '!tool write {"path": "../out.txt", "content": "hi\\n"}\ny\n'
    run = subprocess.run(
        [sys.executable, "-m", "elelem_daemon", "chat", "--no-save"],
        input=script + '!tool execute {"command": "echo ran > marker"}\nno\n',
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "--- /dev/null\n+++ ../out.txt\n@@ -0,0 +1 @@\n+hi\n" in run.stdout
    assert "Allow write: ../out.txt? [allow/deny/always/never] y\n" in run.stdout
    assert (isolated / "out.txt").read_text() == "hi\n"
    assert "Allow execute: echo ran > marker? [allow/deny/always/never] no\n" in run.stdout
    assert "  ✗ User denied permission: execute" in run.stdout
    assert not Path("marker").exists()


def test_a_projects_review_rule_tightens_allow_and_never_loosens_ask(isolated):
    """`review` sits between `ask-outside` and `ask`: a project's `review` counts over the
    user's `allow`, not over the user's `ask`; a project's `allow` cannot undo the
    reviewing editor's defaults."""
    from elelem_daemon.builtins.permissions import Policy

    user_rules(isolated, "write allow\nedit ask\n")
    project_rules("write review\nedit review\n")
    policy = Policy.load(Path.cwd(), project=True)
    assert policy.rule("write") == "review"
    assert policy.rule("edit") == "ask"
    user_rules(isolated, "")
    project_rules("write allow\n")
    policy = Policy.load(Path.cwd(), project=True)
    assert policy.rule("write", reviewing=True) == "review"
    assert policy.rule("write") == "ask-outside"
