"""The shell parser under the permission rules (safety/commands.py, wrappers.py,
options.py): what a command line runs, generated spellings of a denied program, the
checked commands' option allow-lists, and the bounds (docs/permissions.md, "What a
command runs")."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem_daemon.builtins.permission_rules import rule_of
from elelem_daemon.builtins.permissions import Policy
from elelem_daemon.builtins.subjects import Subject
from elelem_daemon.safety.commands import MAX_BYTES, MAX_NESTING, parse


def verdict(rules, command: str) -> str:
    """The rule for `command` under `rules` (the user's side, after the defaults)."""
    policy = Policy.load(Path("."), project=False, given=rules)
    subject = Subject(command, command=True, parsed=parse(command))
    names = {rule.pattern: rule.pattern for rule in policy.rules}
    if policy.denials("execute", names) and subject.parsed.unknown:
        return "ask"
    return policy.rule("execute", names, subject=subject)


# -- spellings of `rm`, generated ------------------------------------------------------


def quoted_name() -> st.SearchStrategy[str]:
    """`rm` as bash reads it: quoted, escaped, split, by path."""
    return st.sampled_from(
        ["rm", "'rm'", '"rm"', "\\rm", "r''m", 'r""m', "r\\m", "/bin/rm", "/usr/bin/rm",
         "$'rm'", "$'\\x72m'", "'r'm", '"r"\'m\'', "./../../bin/rm"]
    )  # fmt: skip


WRAPPERS = [
    "command {}", "builtin {}", "exec {}", "env {}", "env -i {}", "env FOO=1 {}",
    "env -u HOME {}", "nice {}", "nice -n 5 {}", "nohup {}", "timeout 5 {}",
    "timeout -s KILL 5 {}", "sudo {}", "sudo -n -u root {}", "setsid {}", "stdbuf -oL {}",
    "time {}", "busybox {}", "echo x | xargs {}", "xargs -0 -n1 {}",
    "find . -exec {} ';'", "find . -execdir {} +", "sh -c {q}", "bash -c {q}",
    "bash -ec {q}", "dash -c {q}", "env -S {q}",
]  # fmt: skip
GROUPS = [
    "{}", " {}", "\t{}", "({})", "{{ {}; }}", "true; {}", "true && {}", "false || {}",
    "{} &", "! {}", "echo $({})", "echo `{}`", "cat <({})", "true | {}", "if true; then {}; fi",
    "for i in 1; do {}; done", "while false; do :; done; {}", "f() {{ {}; }}; f",
    "x=$({})", "echo \"$({})\"", "case a in a) {};; esac", "FOO=bar {}",
]  # fmt: skip


def wrap(template: str, inner: str) -> str:
    return template.replace("{q}", shlex.quote(inner)).replace("{}", inner)


@settings(max_examples=int(os.environ.get("ELELEM_FUZZ_CASES", 500)))
@given(
    name=quoted_name(),
    layers=st.lists(st.sampled_from(WRAPPERS), max_size=3),
    groups=st.lists(st.sampled_from(GROUPS), max_size=2),
)
def test_a_denied_program_is_found_through_any_wrapping(name, layers, groups):
    """`--allow execute --deny 'execute:rm *'`: every generated spelling is denied,
    or asked about when the parser cannot tell (never allowed)."""
    command = f"{name} -f x"
    for template in layers:
        command = wrap(template, command)
    for template in groups:
        command = template.format(command) if "{q}" not in template else command
    found = verdict([("execute", "allow"), ("execute:rm *", "deny")], command)
    assert found in ("deny", "ask"), command


@given(st.sampled_from(["$(echo rm)", "$x", "${x}", "`echo rm`", "$(printf rm)", "r*m", "{rm,}"]))
def test_a_computed_program_name_is_never_allowed_beside_a_deny_rule(name):
    command = f"{name} -f x"
    assert verdict([("execute", "allow"), ("execute:rm *", "deny")], command) == "ask"
    assert parse(command).unknown


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("rm -f x", ["rm -f x"]),
        ("\\rm 'a b'", ["rm a b"]),
        (
            "env -i A=1 B=2 nice -n 3 rm x",
            ["env -i A=1 B=2 nice -n 3 rm x", "nice -n 3 rm x", "rm x"],
        ),
        ("find src -delete", ["find src -delete", "rm -r src"]),
        ("sh -c 'echo a; rm b'", ["sh -c echo a; rm b", "echo a", "rm b"]),
        ("unlink f", ["unlink f", "rm f"]),
        ("shred -u f", ["shred -u f", "rm -u f"]),
    ],
)
def test_what_a_command_runs(command, programs):
    assert [p.text for p in parse(command).programs] == programs


@pytest.mark.parametrize(
    "command",
    ["eval x", "source f", ". f", "alias x=rm", "$p", "PATH=. ls", "export PATH=.:$PATH",
     "env PATH=. ls", "sudo LD_PRELOAD=x.so ls", "bash", "echo rm x | sh", "bash -s",
     "git -c core.pager=less log", "script -qc 'rm x' /dev/null", "parallel rm ::: x",
     "env --bogus rm", "timeout --bogus 1 rm", "a &&", "find . $(echo -delete)", "bash -c \"$x\""],
)  # fmt: skip
def test_what_the_parser_cannot_tell(command):
    assert parse(command).unknown, command


@pytest.mark.parametrize(
    "command",
    ["python3 -c 1", "python x.py", "node -e 1", "perl -e 1", "ruby -e 1", "sh script.sh",
     "make", "npm run build", "npx x", "./run.sh", "awk 'BEGIN{}'"],
)  # fmt: skip
def test_code_no_rule_sees(command):
    assert parse(command).code, command


# -- the allow side --------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    ["echo hi; rm x", "echo $(rm x)", "echo `rm x`", "echo hi | sh", "echo hi && rm x",
     "echo hi > x", "echo hi\nrm x", "echo ${x:-$(rm x)}", "echo hi & rm x", "echo <(rm x)",
     "echo 'a' ; rm x", "echo x |& rm", "echo x || rm x", "echo x\r rm", "echo a &&"],
)  # fmt: skip
def test_an_allowed_echo_pattern_covers_nothing_else(command):
    assert verdict([("execute:echo*", "allow")], command) == "ask", command
    assert verdict([("execute:echo*", "allow")], "echo hi there") == "allow"


# -- checked commands: their options ---------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("git diff*", "git diff --output=../x"),
        ("git diff*", "git diff --output ../x"),
        ("git diff*", "git diff --no-index ~/.ssh/id_rsa /dev/null"),
        ("git diff*", "git diff ~/.ssh/id_rsa /dev/null"),
        ("git diff*", "git diff ../../etc/passwd x"),
        ("git diff*", "git diff --ext-diff"),
        ("git diff*", "git diff -O/etc/order"),
        ("git diff*", "git diff $x"),
        ("git*", "git -C / diff"),
        ("git*", "git -c core.pager=sh diff"),
        ("git log*", "git log --output=x"),
        ("git log*", "git log -p --ext-diff"),
        ("git show*", "git show HEAD:../x --output=y"),
        ("pytest*", "pytest -p evil"),
        ("pytest*", "pytest --basetemp=/home"),
        ("pytest*", "pytest -o addopts=-pevil"),
        ("pytest*", "pytest --rootdir=/ /tmp/x"),
        ("pytest*", "pytest /etc"),
        ("pytest*", "pytest --junitxml=../x"),
        ("python3 -m pytest*", "python3 -m pytest -p evil"),
    ],
)
def test_an_option_outside_the_allow_list_asks(rule, command):
    assert verdict([(f"execute:{rule}", "allow")], command) == "ask", command


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("git diff*", "git diff"),
        ("git diff*", "git diff --stat HEAD~1 -- src/a.py"),
        ("git diff*", "git diff --cached --name-only"),
        ("git --no-pager diff*", "git --no-pager diff -U5 main..HEAD"),
        ("git log*", "git log --oneline -n 5"),
        ("git log*", "git log -10 --format=%H --author=me"),
        ("git status*", "git status --short"),
        ("pytest*", "pytest -q -x tests/test_a.py -k 'not slow'"),
        ("pytest*", "pytest --tb=short -ra"),
        ("python3 -m pytest*", "python3 -m pytest -q"),
        ("echo*", "echo --output=../x"),  # not a checked command: the glob decides
    ],
)
def test_the_options_on_the_allow_list_run(rule, command):
    assert verdict([(f"execute:{rule}", "allow")], command) == "allow", command


# -- bounds ----------------------------------------------------------------------------


def test_a_command_past_the_byte_bound_cannot_be_told():
    command = "echo " + "a" * MAX_BYTES
    assert parse(command).unknown
    assert verdict([("execute", "allow"), ("execute:rm *", "deny")], command) == "ask"
    assert verdict([("execute", "allow")], command) == "allow"  # no deny rule: nothing held


def test_shells_nested_past_the_bound_cannot_be_told():
    command = "rm -f x"
    for _ in range(MAX_NESTING + 2):
        command = f"sh -c {shlex.quote(command)}"
    assert parse(command).unknown


def test_a_deep_or_wide_command_line_is_read_within_its_bounds():
    assert parse("(" * 5000 + "rm x" + ")" * 5000).unknown  # past the grammar's depth
    assert "rm x" in [p.text for p in parse("$(" * 500 + "rm x" + ")" * 500).programs]
    assert parse("$(" * 3000 + "rm x" + ")" * 3000).unknown
    wide = parse("a | " * 500 + "rm x")
    assert "rm x" in [p.text for p in wide.programs] and not wide.unknown
    assert parse("a | " * 2000 + "rm x").unknown  # past 1,000 programs: cannot tell


def test_a_write_deny_names_every_tool_that_changes_files():
    """The README's CI example: `--deny write` also denies `edit` (the allowed pytest
    would run a conftest.py the model edited)."""
    policy = Policy.load(
        ".", project=False, given=[("execute:pytest*", "allow"), ("write", "deny")]
    )
    assert policy.rule("edit", writes=True) == "deny"
    assert policy.rule("write", writes=True) == "deny"
    assert policy.rule("read") != "deny"
    loose = Policy.load(Path("."), project=False, given=[("write", "allow")])
    assert loose.rule("edit", writes=True) == "ask-outside"  # an allow names write alone


def test_rule_of_keeps_the_subject():
    assert rule_of("execute:rm *", "deny", "x").subject == "rm *"


@settings(max_examples=300)
@given(
    st.text(
        alphabet=st.sampled_from(
            list("rm -'\"\\$(){};|&<>`*?[]!#=\n\t\x00xfind") + ["\ud800", "é"]
        ),
        max_size=80,
    )
)
def test_any_text_is_read_or_cannot_be_told_and_never_raises(text):
    parsed = parse(text)
    assert isinstance(parsed.unknown, list) and len(parsed.programs) <= 1000


VOCABULARY = [
    "rm", "r\\m", "'r'm", '"rm"', "/bin/rm", "x", "-f", "-rf", "echo", "true", "command",
    "env", "env -i", "nice -n 1", "nohup", "exec", "builtin", "xargs", "time", "timeout 1",
    "!", "{", "}", "(", ")", ";", "&&", "||", "|", "$(", "`", "'", '"', "\\", "\n",
    "then", "if", "fi", "do", "done", "unlink", "find .", "-delete", "-exec", "{}", "\\;",
    "+", "X=1", "--", "sh -c", "bash -c", "sh -c --", "bash -o pipefail -c", "'rm -f x'",
    "$'rm'", "$'\\x72m'", "\\\n", "#",
    "\t", "coproc", "stdbuf -oL", "setsid", "busybox", "shred -u", "r$()m", "r``m",
    "r$''m", 'r""m', 'r$""m', "rm${x}",
]  # fmt: skip


@settings(max_examples=int(os.environ.get("ELELEM_FUZZ_CASES", 300)))
@given(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=6))
def test_what_is_allowed_beside_a_deny_rule_never_deletes_in_bash(words):
    """The parser against bash itself: a command the rules allow under `--allow execute
    --deny 'execute:rm *'` is run by bash, and `x` must still be there."""
    command = " ".join(words)
    if verdict([("execute", "allow"), ("execute:rm *", "deny")], command) != "allow":
        return
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "x").write_text("precious\n")
        xdg = ("CONFIG", "STATE", "DATA", "CACHE")
        env = {"PATH": "/usr/bin:/bin", "HOME": folder, **{f"XDG_{n}_HOME": folder for n in xdg}}
        try:
            subprocess.run(
                ["bash", "-c", command], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                capture_output=True, timeout=10,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            pass
        assert (Path(folder) / "x").exists(), command
