"""The options a permissive rule covers for the checked commands (`git diff`, `git log`,
`git show`, `git status`, `pytest`: the README's examples and their kin).

`execute:git diff* allow` was written for reading a diff; `git diff --output=../x`
writes a file and `git diff --no-index ~/.ssh/id_rsa /dev/null` prints any file. So
for these commands an allow rule with a subject covers a call only when every option
is one listed here (shell globs) and no operand names a path out of the folder
(absolute, `~`, a `..` part); anything else asks. docs/permissions.md shows the lists.
"""

from __future__ import annotations

import fnmatch

from .commands import Program

DIFF_OPTIONS = (
    "-p", "-u", "-U*", "--unified=*", "--patch", "--no-patch", "-s", "--raw", "--stat",
    "--stat=*", "--numstat", "--shortstat", "--dirstat*", "--compact-summary", "--summary",
    "--name-only", "--name-status", "--cached", "--staged", "--merge-base", "--no-color",
    "--color", "--color=*", "--word-diff", "--word-diff=*", "--color-words", "-w", "-b",
    "--ignore-all-space", "--ignore-space-change", "--ignore-space-at-eol",
    "--ignore-blank-lines", "--ignore-cr-at-eol", "--check", "--minimal", "--patience",
    "--histogram", "--diff-algorithm=*", "-M", "-M*", "--find-renames*", "--no-renames",
    "-R", "--relative", "-a", "--text", "--exit-code", "--quiet", "--abbrev*",
    "--full-index", "-z", "--no-ext-diff", "--no-textconv", "--no-prefix",
    "--function-context", "-W", "--diff-filter=*", "-S*", "-G*", "--pickaxe-all", "-1",
    "-2", "-3", "--ours", "--theirs", "--base", "--",
)  # fmt: skip
LOG_OPTIONS = DIFF_OPTIONS + (
    "--oneline", "-n", "-n*", "--max-count=*", "-[0-9]*", "--skip=*", "--since=*",
    "--until=*", "--after=*", "--before=*", "--author=*", "--committer=*", "--grep=*",
    "-i", "--regexp-ignore-case", "--all-match", "--invert-grep", "--graph",
    "--decorate", "--decorate=*", "--no-decorate", "--all", "--branches*", "--tags*",
    "--remotes*", "--format=*", "--pretty", "--pretty=*", "--abbrev-commit",
    "--no-abbrev-commit", "--no-merges", "--merges", "--first-parent", "--reverse",
    "--follow", "--date=*", "--topo-order", "--date-order", "--left-right", "--cherry*",
    "--boundary", "--source", "--show-signature", "-L*",
)  # fmt: skip
STATUS_OPTIONS = (
    "-s", "--short", "-b", "--branch", "--porcelain", "--porcelain=*", "--long", "-v",
    "--verbose", "-u", "-u*", "--untracked-files*", "--ignored", "--ignored=*", "-z",
    "--column*", "--no-column", "--ahead-behind", "--no-ahead-behind", "--renames",
    "--no-renames", "--show-stash", "--",
)  # fmt: skip
PYTEST_OPTIONS = (
    "-q", "-qq", "-v", "-vv", "-vvv", "-x", "--exitfirst", "-k", "-m", "-s", "-l",
    "--showlocals", "-r*", "--tb=*", "--lf", "--last-failed", "--ff", "--failed-first",
    "--nf", "--new-first", "--sw", "--stepwise", "--maxfail=*", "--co", "--collect-only",
    "--no-header", "--no-summary", "--durations=*", "--durations-min=*", "--color=*",
    "--code-highlight=*", "--capture=*", "--strict-markers", "--runxfail", "--quiet",
    "--verbose", "--setup-show", "--fixtures", "--markers", "--version", "-h", "--help",
    "--",
)  # fmt: skip
# (program, subcommand or "") -> the options a permissive rule covers
CHECKED: dict[tuple[str, str], tuple[str, ...]] = {
    ("git", "diff"): DIFF_OPTIONS,
    ("git", "log"): LOG_OPTIONS,
    ("git", "show"): LOG_OPTIONS,
    ("git", "status"): STATUS_OPTIONS,
    ("pytest", ""): PYTEST_OPTIONS,
    ("py.test", ""): PYTEST_OPTIONS,
}
GIT_GLOBAL = ("--no-pager", "--no-optional-locks", "-P", "--literal-pathspecs")
VALUED = {"-k", "-m", "-n"}  # options whose value is the next word


def uncovered(program: Program) -> str | None:
    """The first word a permissive rule does not cover in a checked command, or None
    (also for a command that is not checked)."""
    argv = list(program.argv[1:])
    key = (program.name, "")
    if program.name.startswith("python") and argv[:2] == ["-m", "pytest"]:
        argv, key = argv[2:], ("pytest", "")  # python -m pytest
    if program.name == "git":
        while argv and argv[0].startswith("-"):
            if argv[0] not in GIT_GLOBAL:
                return argv[0]
            argv.pop(0)
        key = ("git", argv.pop(0) if argv else "")
    allowed = CHECKED.get(key)
    if allowed is None:
        return None
    after_dashes, valued = False, False
    for word in argv:
        if "$" in word or "`" in word:
            return word  # bash computes it (a computed word is kept as `$?`)
        if valued:
            valued = False
            continue
        if not after_dashes and word.startswith("-") and word != "-":
            if not any(fnmatch.fnmatchcase(word, glob) for glob in allowed):
                return word
            after_dashes, valued = word == "--", word in VALUED
        elif _outside(word):
            return word
    return None


def _outside(word: str) -> bool:
    path = word.split(":", 1)[-1] if ":" in word else word  # `HEAD:../x`
    return path.startswith(("/", "~")) or ".." in path.replace("\\", "/").split("/")
