"""Rules that name what a call runs or touches (`execute:pytest*`, `write:src/*`), and
the rules given on the command line (`--allow`, `--deny`): docs/permissions.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_daemon.builtins.permissions import Policy, parse, rule_of
from elelem_daemon.io import NullInput
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


def session(registry, rules=(), answers=()):
    return start(registry, plugin_files=False, input=NullInput(list(answers)), rules=rules)


def test_a_subject_pattern_parses_with_its_spaces_and_a_bad_one_is_reported():
    rules, problems = parse("execute:npm run test* allow\nexecute: allow\n:x deny\n", "f")
    assert [(r.pattern, r.subject, r.rule) for r in rules] == [
        ("execute", "npm run test*", "allow"),
        ("execute", None, "ask"),
        ("", None, "ask"),
    ]
    assert len(problems) == 2
    assert "expected `TOOL RULE` or `TOOL:SUBJECT RULE`" in problems[0]


def test_rule_of_takes_a_command_line_pattern_whole():
    rule = rule_of("execute:echo # not a comment", "allow", "--allow")
    assert (rule.pattern, rule.subject, rule.rule) == ("execute", "echo # not a comment", "allow")
    with pytest.raises(ValueError, match="a tool name or glob"):
        rule_of("", "allow", "--allow")
    with pytest.raises(ValueError, match="a tool name or glob"):
        rule_of(":echo", "allow", "--allow")


async def test_an_allowed_command_runs_and_another_still_asks(registry):
    s = session(registry, [("execute:echo *", "allow")])
    ran = await s.toolbox.run("execute", {"command": "echo hi"})
    assert ran.ok and "hi" in str(ran.payload)
    other = await s.toolbox.run("execute", {"command": "ls"})
    assert "no one could answer" in other.payload["error"]


@pytest.mark.parametrize(
    "command",
    [
        "echo hi; touch pwned",
        "echo hi && touch pwned",
        "echo hi | tee pwned",
        "echo hi > pwned",
        "echo $(touch pwned)",
        "echo `touch pwned`",
        "echo ${x:=$(touch pwned)}",
        "echo hi\ntouch pwned",
        "echo hi & touch pwned",
    ],
)
async def test_an_allow_pattern_never_covers_a_compound_command(registry, command):
    """`execute:echo*` matches `echo hi; touch pwned` as a glob: a permissive rule with a
    subject never covers a command with shell control operators or substitutions."""
    s = session(registry, [("execute:echo*", "allow")])
    result = await s.toolbox.run("execute", {"command": command})
    assert not result.ok and "no one could answer" in result.payload["error"]
    assert not Path("pwned").exists()


async def test_a_deny_pattern_catches_any_part_of_a_compound_command(registry):
    s = session(registry, [("execute", "allow"), ("execute:rm *", "deny")])
    denied = await s.toolbox.run("execute", {"command": "echo hi; rm -rf stuff"})
    assert denied.payload["error"] == "Permission denied: execute"
    assert (await s.toolbox.run("execute", {"command": "echo fine"})).ok


async def test_a_path_pattern_matches_the_resolved_path_inside_the_folder(registry):
    (Path.cwd() / "src").mkdir()
    s = session(registry, [("write:src/*", "deny")])
    denied = await s.toolbox.run("write", {"path": "src/a.py", "content": "x"})
    assert denied.payload["error"] == "Permission denied: write"
    sneaky = await s.toolbox.run("write", {"path": "docs/../src/b.py", "content": "x"})
    assert sneaky.payload["error"] == "Permission denied: write"
    assert (await s.toolbox.run("write", {"path": "c.py", "content": "x"})).ok


async def test_an_allowed_path_pattern_does_not_reach_outside_the_folder(registry, isolated):
    s = session(registry, [("write:*", "allow")])
    outside = await s.toolbox.run("write", {"path": "../elsewhere.txt", "content": "x"})
    assert not outside.ok and "no one could answer" in outside.payload["error"]
    assert not (isolated / "elsewhere.txt").exists()


def test_command_line_rules_sit_on_the_users_side_and_a_project_still_tightens(isolated):
    path = Path.cwd() / ".agents" / "permissions"
    path.parent.mkdir(parents=True)
    path.write_text("execute deny\n")
    user = isolated / "xdg_config_home" / "elelem" / "permissions"
    user.parent.mkdir(parents=True)
    user.write_text("read deny\n")
    policy = Policy.load(Path.cwd(), project=True, given=[("execute", "allow"), ("read", "allow")])
    assert policy.rule("execute") == "deny"  # the project's is stricter
    assert policy.rule("read") == "allow"  # the command line comes after the user's file
