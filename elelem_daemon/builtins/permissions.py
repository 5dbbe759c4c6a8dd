"""Built-in permission policy: a global before hook that allows, asks about or denies
every tool call. The format and the answers are documented in docs/permissions.md.

Rules are read when a session starts (and on /reload); the last matching line wins:
1. the defaults (DEFAULTS below: execute asks; write, edit and the read-only file
   tools (read, grep, glob, list) ask outside the cwd); when the session's editor
   reviews changes (`changes.reviewer` is `editor`), REVIEWING follows them: write and
   edit are reviewed inside the cwd;
2. the user's file, `$XDG_CONFIG_HOME/elelem/permissions` (`~/.config/elelem/permissions`);
3. the project's `.agents/permissions`, only when the project is trusted (as its plugins).

What the model reads when a call is refused (the hook raises; the toolbox makes it a
failure `{"error", "name", "args", "ok": false}`):
- `Permission denied: TOOL`: a `deny` rule;
- `User denied permission: TOOL`: the user was asked and said no;
- `Permission denied: TOOL (NO_ANSWER)`: the rule is `ask` and no one answered
  (no terminal, or an editor that cannot answer `input/ask`).

`review` (write and edit, inside the cwd): the hook lets the call run and the tool
has the change reviewed (changes.py); outside the cwd, for a tool that makes no change
to review, or where no one reviews hunk by hunk, `review` asks as `ask` does. (Once
the user accepted every change for the turn, the tool lands the rest unreviewed.)
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..changes import check_fresh, reviewer
from ..io import ask
from ..registry import Plugin
from .files import preview, resolve

RULES = ("allow", "review", "ask", "deny", "ask-outside")
DEFAULTS = (
    "* allow\nexecute ask\nwrite ask-outside\nedit ask-outside\n"
    "read ask-outside\ngrep ask-outside\nglob ask-outside\nlist ask-outside\n"
)
REVIEWING = "write review\nedit review\n"  # after DEFAULTS, when the editor reviews
REVIEWING_SOURCE = "defaults (reviewing editor)"
REVIEWED = ("write", "edit")  # the tools whose changes can be reviewed
OPTIONS = ["allow", "deny", "always", "never"]
ANSWERS = {
    "allow": "allow", "yes": "allow", "y": "allow",
    "always": "always", "a": "always", "never": "never",
}  # fmt: skip
NO_ANSWER = "the user must approve it, and no one could answer"


class PermissionDenied(Exception):
    """Raised by the hook: the call does not run and the model reads why."""


def user_file() -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".config") / "elelem" / "permissions"


def project_file(cwd: Path) -> Path:
    return Path(cwd) / ".agents" / "permissions"


@dataclass(frozen=True)
class Rule:
    pattern: str
    rule: str
    where: str


def parse(text: str, source: str) -> tuple[list[Rule], list[str]]:
    """The rules in a file, and a message per bad line (a bad rule becomes `ask`)."""
    rules, problems = [], []
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{source}:{number}"
        rule = words[1] if len(words) == 2 else None
        if rule not in RULES:
            problems.append(
                f"{where}: expected `TOOL RULE` with RULE one of {', '.join(RULES)}; "
                f"got {raw.strip()!r}, so {words[0]} will ask"
            )
            rule = "ask"
        rules.append(Rule(words[0], rule, where))
    return rules, problems


@dataclass
class Policy:
    rules: list[Rule]
    always: set[str] = field(default_factory=set)
    never: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, cwd: Path, project: bool = True) -> Policy:
        rules, problems = parse(DEFAULTS, "defaults")
        rules += parse(REVIEWING, REVIEWING_SOURCE)[0]
        for path in [user_file(), *([project_file(cwd)] if project else [])]:
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{path}: unreadable ({exc}); its rules are ignored")
                continue
            more, bad = parse(text, str(path))
            rules += more
            problems += bad
        return cls(rules, problems=problems)

    def rule(
        self,
        tool: str,
        names: dict[str, str] | None = None,
        default: str = "allow",
        reviewing: bool = False,
    ) -> str:
        """The last rule whose pattern matches tool (a pattern may be an alias). The
        defaults' catch-all `* allow` gives way to the tool's own `default`; the
        reviewing editor's defaults count only when `reviewing`."""
        names = names or {}
        for rule in reversed(self.rules):
            if not reviewing and rule.where.startswith(REVIEWING_SOURCE):
                continue
            if names.get(rule.pattern, rule.pattern) == tool or fnmatch.fnmatchcase(
                tool, rule.pattern
            ):
                catch_all = rule.pattern == "*" and rule.where.startswith("defaults:")
                return default if catch_all else rule.rule
        return default

    def verdict(self, session: Any, tool: str, args: dict[str, Any]) -> str:
        """allow, review, ask or deny for this call. A tool may carry its own default
        rule (`permission`, e.g. `ask` for MCP tools), which any rule naming it overrides."""
        names = {p.pattern: session.toolbox.resolve(p.pattern).name for p in self.rules}
        default = getattr(session.toolbox.resolve(tool), "permission", None)
        by = reviewer(session)
        rule = self.rule(tool, names, default if default in RULES else "allow", by == "editor")
        if rule == "deny":
            return "deny"
        if tool in self.always or rule == "allow":
            return "allow"
        if rule == "ask-outside":
            return "ask" if outside(session, args) else "allow"
        if rule == "review" and tool in REVIEWED and not outside(session, args):
            return "review" if by is not None else "ask"
        return "ask"


def outside(session: Any, args: dict[str, Any]) -> bool:
    """Does the call's `path` argument lead out of the session's working directory?"""
    path = args.get("path")
    if not isinstance(path, str):
        return False
    return not resolve(session, path).is_relative_to(session.cwd)


def policy_of(session: Any) -> Policy:
    policy = getattr(session, "permissions", None)
    if not isinstance(policy, Policy):
        policy = session.permissions = Policy.load(session.cwd, session.project)
    return policy


def question(tool: str, args: dict[str, Any]) -> str:
    """`Allow execute: COMMAND?`, the command (or path, or arguments) whole: padding must
    not push what will really run out of sight (each face shows it whole, the terminal
    with its control characters made visible)."""
    subject = args.get("command") or args.get("path") or json.dumps(args, ensure_ascii=False)
    return f"Allow {tool}: {subject}?"


def register(plugin: Plugin) -> None:
    @plugin.setup
    def permissions(session: Any) -> None:
        """(Re)read the policy; an "always" or "never" answer outlives /reload."""
        old = getattr(session, "permissions", None)
        policy = Policy.load(session.cwd, session.project)
        if isinstance(old, Policy):
            policy.always, policy.never = old.always, old.never
        for problem in policy.problems:
            print(f"elelem: permissions: {problem}", file=sys.stderr, flush=True)
        session.permissions = policy

    @plugin.before()
    async def permission(session: Any, args: dict[str, Any], tool_name: str) -> None:
        policy = policy_of(session)
        verdict = policy.verdict(session, tool_name, args)
        if verdict in ("allow", "review"):  # a review is the tool's to run (changes.py)
            return
        if verdict == "deny":
            raise PermissionDenied(f"Permission denied: {tool_name}")
        if tool_name in policy.never:  # the user said never for this session
            raise PermissionDenied(f"User denied permission: {tool_name}")
        if tool_name in REVIEWED and isinstance(args.get("path"), str):
            await check_fresh(session, resolve(session, args["path"]))  # before it is shown
        tool: dict[str, Any] = {"name": tool_name, "arguments": args}
        if (diff := await preview(session, tool_name, args)) is not None:
            tool["diff"] = diff
        answer = await ask(
            session.input, question(tool_name, args), OPTIONS, kind="permission", tool=tool
        )
        if answer is None:
            raise PermissionDenied(f"Permission denied: {tool_name} ({NO_ANSWER})")
        choice = ANSWERS.get(answer.strip().lower())
        if choice is None:
            raise PermissionDenied(f"User denied permission: {tool_name}")
        if choice == "never":
            policy.never.add(tool_name)
            raise PermissionDenied(f"User denied permission: {tool_name}")
        if choice == "always":
            policy.always.add(tool_name)
