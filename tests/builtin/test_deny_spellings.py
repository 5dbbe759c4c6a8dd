"""A deny rule means what it says, whatever the spelling (issue 36): `execute` rules are
matched against the commands that would actually run, found by a shell parser
(elelem_daemon/safety/commands.py; docs/permissions.md, "What a command runs").

Each case runs the real command through the session's toolbox (bash), so a spelling
that slips past the rule deletes the file."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.spellings import SPELLINGS

from elelem_daemon.io import CannotAsk, NullInput
from elelem_daemon.plugins import core_registry
from elelem_daemon.safety.commands import parse
from elelem_daemon.session import start

DENIED = "Permission denied: execute"
UNANSWERED = "no one could answer"


@pytest.fixture(scope="module")
def registry():
    return core_registry(entry_points=False)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "x").write_text("precious\n")
    monkeypatch.chdir(project)
    return project


def session(registry, folder, rules, answers=()):
    return start(
        registry, plugin_files=False, cwd=folder, input=NullInput(list(answers)), rules=rules
    )


@pytest.mark.parametrize("command", SPELLINGS)
async def test_a_denied_program_does_not_run_whatever_the_spelling(registry, folder, command):
    """`elelem ask --allow execute --deny 'execute:rm *'`, as the issue ran it."""
    s = session(registry, folder, [("execute", "allow"), ("execute:rm *", "deny")])
    result = await s.toolbox.run("execute", {"command": command})
    assert not result.ok
    assert DENIED in result.payload["error"] or UNANSWERED in result.payload["error"]
    assert (folder / "x").read_text() == "precious\n"


@pytest.mark.parametrize("command", SPELLINGS)
async def test_an_always_answer_does_not_let_a_denied_program_through(registry, folder, command):
    """The user answered `always` for a harmless command first: the deny rule (and the
    question about what the parser cannot tell) comes before that answer."""
    s = session(registry, folder, [("execute:rm *", "deny")], answers=["always"])
    first = await s.toolbox.run("execute", {"command": "echo harmless"})
    assert first.ok
    result = await s.toolbox.run("execute", {"command": command})
    assert not result.ok
    assert DENIED in result.payload["error"] or UNANSWERED in result.payload["error"]
    assert (folder / "x").read_text() == "precious\n"


@pytest.mark.parametrize(
    "command",
    [
        "sh -c 'rm -f x'",
        "sh -c -- 'rm -f x'",
        "bash -o pipefail -c 'rm -f x'",
        "bash -c \"command 'rm' -f x\"",
        "sudo -n rm -f x",
        "nice -n 5 rm -f x",
        "nohup rm -f x",
        "timeout 5 rm -f x",
        "exec rm -f x",
        "env -i FOO=1 rm -f x",
        "find . -name x -exec rm {} ';'",
        "find . -name x -execdir rm {} +",
        "echo $(rm -f x)",
        "cat <(rm -f x)",
        "true && ! rm -f x",
        "if true; then rm -f x; fi",
        "f() { rm -f x; }; f",
        "X=1 rm -f x",
        "r\\m -f x",
        '"r"m -f x',
        "$'rm' -f x",
        "unlink x",
    ],
)
async def test_wrappers_groups_and_equivalents_are_denied_too(registry, folder, command):
    s = session(registry, folder, [("execute", "allow"), ("execute:rm *", "deny")])
    result = await s.toolbox.run("execute", {"command": command})
    assert not result.ok, command
    assert (folder / "x").exists()


@pytest.mark.parametrize(
    "command",
    [
        "eval 'rm -f x'",
        "p=rm; $p -f x",
        "`echo rm` -f x",
        "source ./script",
        ". ./script",
        "echo 'rm -f x' | sh",
        "sh script",
        "python3 -c 'import os; os.remove(\"x\")'",
        "perl -e 'unlink \"x\"'",
        'node -e \'require("fs").unlinkSync("x")\'',
        "ruby -e 'File.delete(\"x\")'",
        "make clean",
        "npm run clean",
        "npx rimraf x",
        "./script",
        "/usr/bin/../../tmp/script",
        "rm -f x &&",  # a parse error: cannot tell
    ],
)
async def test_what_the_parser_cannot_tell_is_asked_while_a_deny_rule_exists(
    registry, folder, command
):
    (folder / "script").write_text("#!/bin/sh\nrm -f x\n")
    (folder / "script").chmod(0o755)
    allowed = [(f"execute:{word}*", "allow") for word in set(command.split()[:1])]
    s = session(registry, folder, [*allowed, ("execute:rm *", "deny")], answers=["always"])
    assert (await s.toolbox.run("execute", {"command": "true"})).ok  # answered always
    result = await s.toolbox.run("execute", {"command": command})
    assert not result.ok, command
    assert UNANSWERED in result.payload["error"] or DENIED in result.payload["error"]
    assert (folder / "x").exists()


async def test_an_interpreter_runs_under_a_bare_allow_and_without_any_deny_rule(registry, folder):
    """The interpreter rule holds only while an `execute` deny rule exists, and a bare
    `execute allow` (the user's word for every command) still allows it."""
    code = "python3 -c 'print(6 * 7)'"
    bare = session(registry, folder, [("execute", "allow"), ("execute:rm *", "deny")])
    assert (await bare.toolbox.run("execute", {"command": code})).ok
    alone = session(registry, folder, [("execute:python3*", "allow")])
    assert (await alone.toolbox.run("execute", {"command": code})).ok
    held = session(registry, folder, [("execute:python3*", "allow"), ("execute:rm *", "deny")])
    result = await held.toolbox.run("execute", {"command": code})
    assert UNANSWERED in result.payload["error"]


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -f x' | sh",
        "bash <<< 'rm -f x'",
        "script -qc 'rm -f x' /dev/null",
        "parallel rm ::: x",
        "git -c alias.gone='!rm -f x' gone",
        "flock lock -c 'rm -f x'",
    ],
)
async def test_a_command_runner_it_does_not_read_asks_even_under_a_bare_allow(
    registry, folder, command
):
    s = session(registry, folder, [("execute", "allow"), ("execute:rm *", "deny")])
    result = await s.toolbox.run("execute", {"command": command})
    assert UNANSWERED in result.payload["error"], command
    assert (folder / "x").exists()


@pytest.mark.parametrize(
    "command",
    [
        "x='a[$(rm -f x)]'; echo $((x))",
        "x='a[$(rm -f x)]'; (( x ))",
        "x='a[$(rm -f x)]'; [[ $x -eq 0 ]]",
        "x='$(rm -f x)'; echo ${x@P}",
        "x='a[$(rm -f x)]'; declare -a a; echo ${a[x]}",
        "declare -a a; unset 'a[$(rm -f x)]'",
        "printf -v 'a[$(rm -f x)]' %s 1",
        "x='a[$(rm -f x)]'; let x",
        "cat <<EOF\n`rm -f x`\nEOF",
    ],
)
async def test_what_bash_evaluates_as_code_asks_even_under_a_bare_allow(registry, folder, command):
    """Arithmetic and subscripts evaluate `$(…)` hidden in a value: bash runs these."""
    s = session(registry, folder, [("execute", "allow"), ("execute:rm *", "deny")])
    result = await s.toolbox.run("execute", {"command": command})
    assert UNANSWERED in result.payload["error"], command
    assert (folder / "x").exists()


async def test_a_computed_program_asks_even_under_a_bare_allow(registry, folder):
    s = session(registry, folder, [("execute", "allow"), ("execute:rm *", "deny")])
    result = await s.toolbox.run("execute", {"command": "$(echo rm) -f x"})
    assert UNANSWERED in result.payload["error"]
    assert (folder / "x").exists()
    assert (await s.toolbox.run("execute", {"command": "echo $(echo fine)"})).ok


@pytest.mark.parametrize(
    "command",
    [
        "echo hi",
        "ls -la",
        "git status",
        "echo rm -f x",
        "grep -r 'rm -f' .",
        "printf '%s\\n' rm",
        "echo hi | wc -l",
        "cat x",
    ],
)
async def test_other_programs_still_run_beside_a_deny_rule(registry, folder, command):
    s = session(registry, folder, [("execute", "allow"), ("execute:rm *", "deny")])
    assert (await s.toolbox.run("execute", {"command": command})).ok, command
    assert (folder / "x").exists()


@pytest.mark.parametrize(
    ("allowed", "command"),
    [
        ("find*", "find . -name x -delete"),
        ("find*", "find . -name x -exec rm {} +"),
        ("xargs*", "xargs rm -f x"),
        ("env*", "env rm -f x"),
        ("timeout*", "timeout 5 rm -f x"),
        ("sh -c*", "sh -c 'rm -f x'"),
    ],
)
async def test_an_allowed_wrapper_does_not_carry_a_denied_program(
    registry, folder, allowed, command
):
    """`execute:rm * deny` then `execute:find* allow`: the later allow names `find`, not
    the `rm` it would run, so the deny rule still holds (and a literal `rm` with it)."""
    s = session(registry, folder, [("execute:rm *", "deny"), (f"execute:{allowed}", "allow")])
    result = await s.toolbox.run("execute", {"command": command})
    assert not result.ok, command
    assert (folder / "x").exists()


class ApproveAll:
    """An ACP client's approve-all setting: it answers every question `allow`, and one
    only the user may answer (`user_only`) is not put to it (CannotAsk)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def ask(self, prompt, options=None, **details):
        if details.get("user_only"):
            raise CannotAsk("this client declares no forms")
        self.asked.append(prompt)
        return "allow"


async def test_an_approve_all_client_cannot_answer_what_a_deny_rule_cannot_check(registry, folder):
    client = ApproveAll()
    s = start(
        registry,
        plugin_files=False,
        cwd=folder,
        input=client,
        rules=[("execute:rm *", "deny")],
    )
    refused = await s.toolbox.run("execute", {"command": "$(echo rm) -f x"})
    assert refused.payload["error"].startswith("Refused: execute (a deny rule is set")
    assert (folder / "x").exists() and client.asked == []
    # code no rule sees is an ordinary question (minus `always`): the client answers it
    ran = await s.toolbox.run("execute", {"command": "python3 -c 'print(1)'"})
    assert ran.ok and len(client.asked) == 1


async def test_a_command_that_takes_too_long_to_read_cannot_be_told(registry, folder, monkeypatch):
    from elelem_daemon.builtins import permissions

    def slow(command):
        time.sleep(0.5)
        return parse(command)

    monkeypatch.setattr(permissions, "parse_command", slow)
    monkeypatch.setattr(permissions, "READ_TIMEOUT", 0.05)
    read = await permissions.read_command("rm -f x")
    assert read.unknown and "took more than" in read.unknown[0]
    s = session(registry, folder, [("execute", "allow"), ("execute:rm *", "deny")])
    result = await s.toolbox.run("execute", {"command": "echo fine"})
    assert UNANSWERED in result.payload["error"]
