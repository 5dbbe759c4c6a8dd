"""Permission rules as written: the defaults, a rules file's lines, a `--allow` or
`--deny` pattern (`TOOL` or `TOOL:SUBJECT`), and where the files are
(docs/permissions.md, "The files"). permissions.py decides with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..base.config import config_dir

RULES = ("allow", "review", "ask", "deny", "ask-outside")
# review: asks outside the cwd as ask-outside does, and shows every change inside it
STRICTNESS = {"allow": 0, "ask-outside": 1, "review": 2, "ask": 3, "deny": 4}
WRITING_KINDS = frozenset({"edit", "delete", "move"})
STRICT = frozenset({"ask", "deny"})
DEFAULTS = (
    "* allow\nexecute ask\nwrite ask-outside\nedit ask-outside\n"
    "read ask-outside\ngrep ask-outside\nglob ask-outside\nlist ask-outside\n"
)
REVIEWING = "write review\nedit review\n"  # after DEFAULTS, when the editor reviews
REVIEWING_SOURCE = "defaults (reviewing editor)"
REVIEWED = ("write", "edit")  # the tools whose changes can be reviewed


def user_file() -> Path:
    return config_dir() / "permissions"


def project_file(cwd: Path) -> Path:
    return Path(cwd) / ".agents" / "permissions"


@dataclass(frozen=True)
class Rule:
    pattern: str  # a tool name, alias or glob
    rule: str
    where: str
    project: bool = False  # from the project's file: it may only tighten
    subject: str | None = None  # a glob over the call's command or path (`TOOL:SUBJECT`)


def rule_of(pattern: str, rule: str, where: str, project: bool = False) -> Rule:
    """One rule from `TOOL` or `TOOL:SUBJECT` (the subject whole, spaces and all);
    ValueError when a part is missing."""
    tool, colon, subject = pattern.partition(":")
    if not tool.strip() or (colon and not subject.strip()):
        raise ValueError(
            "expected a tool name or glob, then optionally `:` and a command or path "
            f"glob (`execute:pytest*`); got {pattern!r}"
        )
    return Rule(tool.strip(), rule, where, project, subject.strip() if colon else None)


def parse(text: str, source: str, project: bool = False) -> tuple[list[Rule], list[str]]:
    """The rules in a file, and a message per bad line (a bad rule becomes `ask`)."""
    rules, problems = [], []
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{source}:{number}"
        spaced = len(words) > 2 and ":" in words[0]  # `execute:npm test allow`
        rule: str | None = words[-1] if len(words) == 2 or spaced else None
        try:
            found = rule_of(" ".join(words[:-1]) if rule else words[0], "ask", where, project)
        except ValueError:
            found, rule = Rule(words[0].partition(":")[0], "ask", where, project), None
        if rule not in RULES:
            problems.append(
                f"{where}: expected `TOOL RULE` or `TOOL:SUBJECT RULE` with RULE one of "
                f"{', '.join(RULES)}; got {raw.strip()!r}, so {found.pattern} will ask"
            )
            rule = "ask"
        rules.append(Rule(found.pattern, rule, where, project, found.subject))
    return rules, problems
