"""Built-in permission policy: a global before hook that allows, asks about or denies
every tool call. The format and the answers are documented in docs/permissions.md.

Rules are read when a session starts (and on /reload):
1. the defaults (DEFAULTS below: execute asks; write, edit and the read-only file
   tools (read, grep, glob, list) ask outside the cwd); when the session's editor
   reviews changes (`changes.reviewer` is `editor`), REVIEWING follows them: write and
   edit are reviewed inside the cwd;
2. the user's file, `$XDG_CONFIG_HOME/elelem/permissions` (`~/.config/elelem/permissions`);
   of these two, the last matching line wins;
3. the project's `.agents/permissions`, only when the folder is trusted (trust.py).
   It may only tighten: its last matching line counts only when it is stricter than
   the user's (allow < ask-outside < review < ask < deny), so a project cannot allow
   what the user's rules ask about or deny.

Below every rule: a `write` or `edit` (any tool of kind edit, delete or move) whose
`path` is protected (protected.py: `.git/`, `.agents/`, AGENTS.md, shell rc files, the
user's elelem folders, ...) always asks, with the reason in the question; no rule and
no `always` answer lets it through unasked (a `deny` still denies). A path "outside"
the folder is one that resolves out of it (`..`, `~`, a symlink) or a file with more
than one hard link (its other name may be anywhere). The question shows the whole
command or path, however long.

What the model reads when a call is refused (the hook raises; the toolbox makes it a
failure `{"error", "name", "args", "ok": false}`):
- `Permission denied: TOOL`: a `deny` rule;
- `User denied permission: TOOL`: the user was asked and said no;
- `Permission denied: TOOL (NO_ANSWER)`: the rule is `ask` and no one answered
  (no terminal, or an editor that cannot answer `input/ask`);
- `Refused: TOOL PATH (...)`: a protected path, and a client that could answer the
  question without the user (over ACP, one without forms: its approve-all setting
  would say yes): the question is `user_only`, the Input raises CannotAsk, nothing is
  asked, and the chat says what was refused and how to do it (`refusal`).

`review` (write and edit, inside the cwd): the hook lets the call run and the tool
has the change reviewed (changes.py); outside the cwd, for a tool that makes no change
to review, or where no one reviews hunk by hunk, `review` asks as `ask` does. (Once
the user accepted every change for the turn, the tool lands the rest unreviewed.)
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import regular
from ..base.config import config_dir
from ..base.log import notice
from ..edits.changes import check_fresh, reviewer
from ..edits.filesystem import hard_links
from ..io import CannotAsk, ask
from ..ports import SessionView
from ..registry import Plugin
from ..safety.protected import protected
from .files import preview, resolve

RULES = ("allow", "review", "ask", "deny", "ask-outside")
# review: asks outside the cwd as ask-outside does, and shows every change inside it
STRICTNESS = {"allow": 0, "ask-outside": 1, "review": 2, "ask": 3, "deny": 4}
WRITING_KINDS = frozenset({"edit", "delete", "move"})
DEFAULTS = (
    "* allow\nexecute ask\nwrite ask-outside\nedit ask-outside\n"
    "read ask-outside\ngrep ask-outside\nglob ask-outside\nlist ask-outside\n"
)
REVIEWING = "write review\nedit review\n"  # after DEFAULTS, when the editor reviews
REVIEWING_SOURCE = "defaults (reviewing editor)"
RULES_CAP = 1 << 20  # bytes of a permissions file
REVIEWED = ("write", "edit")  # the tools whose changes can be reviewed
OPTIONS = ["allow", "deny", "always", "never"]
PROTECTED_OPTIONS = ["allow", "deny", "never"]  # "always" would not hold for these
ANSWERS = {
    "allow": "allow", "yes": "allow", "y": "allow",
    "always": "always", "a": "always", "never": "never",
}  # fmt: skip
NO_ANSWER = "the user must approve it, and no one could answer"


class PermissionDenied(Exception):
    """Raised by the hook: the call does not run and the model reads why."""


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


# What makes a command more than one simple command: a permissive rule with a subject
# (`execute:echo* allow`) never covers it; a strict one checks each part.
SHELL_CONTROL = re.compile(r"[;&|`<>\n\r]|\$[({]")
PERMISSIVE = frozenset({"allow", "ask-outside", "review"})


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


@dataclass(frozen=True)
class Subject:
    """What a `TOOL:SUBJECT` rule matches in a call (`subject_of`)."""

    text: str  # the command as given, or the path resolved
    command: bool  # a command (else a path)
    outside: bool = False  # a path out of the folder (`text` is then absolute)


def matches(rule: Rule, subject: Subject | None) -> bool:
    """Whether a rule's subject glob covers the call (a rule with no subject covers
    every call). A permissive rule never covers a compound command, nor a path out of
    the folder unless its glob is absolute; a strict one covers a compound command
    when it covers any of its parts."""
    if rule.subject is None:
        return True
    if subject is None:
        return False
    glob, text = rule.subject, subject.text
    permissive = rule.rule in PERMISSIVE
    if subject.outside and permissive and not glob.startswith("/"):
        return False
    if not subject.command or not SHELL_CONTROL.search(text):
        return fnmatch.fnmatchcase(text, glob)
    if permissive:
        return False
    parts = [part.strip() for part in SHELL_CONTROL.split(text)]
    return any(fnmatch.fnmatchcase(part, glob) for part in [text, *parts] if part)


@dataclass
class Policy:
    rules: list[Rule]
    always: set[str] = field(default_factory=set)
    never: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, cwd: Path, project: bool = True, given: Sequence[tuple[str, str]] = ()) -> Policy:
        """The defaults, the user's file, the rules `given` on the command line
        (`--allow`, `--deny`: the user's side, after the file), the project's file."""
        rules, problems = parse(DEFAULTS, "defaults")
        rules += parse(REVIEWING, REVIEWING_SOURCE)[0]  # the user's side, as the defaults
        for path, of_project in [(user_file(), False), (project_file(cwd), True)]:
            if of_project:
                rules += [rule_of(pattern, rule, "command line") for pattern, rule in given]
                if not project:
                    break
            try:
                data = regular.read(path, RULES_CAP + 1)  # never waits on a FIFO
                if len(data) > RULES_CAP:
                    raise OSError(f"larger than {RULES_CAP} bytes")
                text = data.decode("utf-8")
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{path}: unreadable ({exc}); its rules are ignored")
                continue
            more, bad = parse(text, str(path), of_project)
            rules += more
            problems += bad
        return cls(rules, problems=problems)

    def rule(
        self,
        tool: str,
        names: dict[str, str] | None = None,
        default: str = "allow",
        reviewing: bool = False,
        subject: Subject | None = None,
    ) -> str:
        """The user's last matching rule (a pattern may be an alias), unless the
        project's last matching rule is stricter. The defaults' catch-all `* allow`
        gives way to the tool's own `default`; a project's rule can only tighten it;
        the reviewing editor's defaults count only when `reviewing`."""
        names = names or {}
        found: dict[bool, str] = {}
        for rule in reversed(self.rules):
            if rule.project in found:
                continue
            if not reviewing and rule.where.startswith(REVIEWING_SOURCE):
                continue
            if (
                names.get(rule.pattern, rule.pattern) == tool
                or fnmatch.fnmatchcase(tool, rule.pattern)
            ) and matches(rule, subject):
                catch_all = rule.pattern == "*" and rule.where.startswith("defaults:")
                found[rule.project] = default if catch_all else rule.rule
            if len(found) == 2:
                break
        mine, theirs = found.get(False, default), found.get(True, "allow")
        return theirs if STRICTNESS[theirs] > STRICTNESS[mine] else mine

    def verdict(self, session: SessionView, tool: str, args: dict[str, Any]) -> str:
        """allow, review, ask or deny for this call. A tool may carry its own default
        rule (`permission`, e.g. `ask` for MCP tools), which any rule naming it overrides."""
        names = {p.pattern: session.toolbox.resolve(p.pattern).name for p in self.rules}
        default = getattr(session.toolbox.resolve(tool), "permission", None)
        by = reviewer(session)
        rule = self.rule(
            tool,
            names,
            default if default in RULES else "allow",
            by == "editor",
            subject_of(session, args),
        )
        if rule == "deny":
            return "deny"
        if guarded(session, tool, args):
            return "ask"  # whatever the rules and the `always` answers say
        if tool in self.always or rule == "allow":
            return "allow"
        if rule == "ask-outside":
            return "ask" if outside(session, args) else "allow"
        if rule == "review" and tool in REVIEWED and not outside(session, args):
            return "review" if by is not None else "ask"
        return "ask"


def subject_of(session: SessionView, args: dict[str, Any]) -> Subject | None:
    """What a `TOOL:SUBJECT` rule matches: the call's command as given, or its path
    resolved (relative to the folder inside it, absolute outside it)."""
    command, path = args.get("command"), args.get("path")
    if isinstance(command, str):
        return Subject(command, command=True)
    if not isinstance(path, str):
        return None
    try:
        resolved = resolve(session, path)
    except (OSError, RuntimeError, ValueError):
        return None
    if resolved.is_relative_to(session.cwd):
        return Subject(resolved.relative_to(session.cwd).as_posix(), command=False)
    return Subject(str(resolved), command=False, outside=True)


def outside(session: SessionView, args: dict[str, Any]) -> bool:
    """Does the call's `path` argument lead out of the session's working directory?
    A file with more than one hard link does: its other names may be anywhere."""
    path = args.get("path")
    if not isinstance(path, str):
        return False
    try:
        resolved = resolve(session, path)
    except (OSError, RuntimeError, ValueError):
        return True  # the tool itself will say what is wrong with it
    if not resolved.is_relative_to(session.cwd):
        return True
    return hard_links(resolved) > 0


def guarded(session: SessionView, tool: str, args: dict[str, Any]) -> str | None:
    """Why this call would write a protected path (protected.py), or None."""
    path = args.get("path")
    if not isinstance(path, str):
        return None
    if tool not in ("write", "edit") and session.toolbox.resolve(tool).kind not in WRITING_KINDS:
        return None
    try:
        resolved = resolve(session, path)
    except (OSError, RuntimeError, ValueError):
        return None  # nothing can be written there: the tool fails
    why = protected(resolved)
    return None if why is None else f"{resolved} is protected: {why}"


def policy_of(session: SessionView) -> Policy:
    policy = getattr(session, "permissions", None)
    if not isinstance(policy, Policy):
        policy = Policy.load(session.cwd, session.project, session.rules)
        session.permissions = policy
    return policy


def question(tool: str, args: dict[str, Any], why: str | None = None) -> str:
    """`Allow TOOL: SUBJECT?`, the subject whole (the command, the path, or the
    arguments), however long: padding must not push what will really run out of sight
    (each face shows it whole, the terminal with its control characters made visible);
    for a protected path, why it asks."""
    subject = args.get("command") or args.get("path") or json.dumps(args, ensure_ascii=False)
    text = f"Allow {tool}: {subject}?"
    return f"{text} ({why}; what is written there decides what runs later)" if why else text


def refusal(tool: str, args: dict[str, Any], why: str, client: str) -> tuple[str, str]:
    """What the user is told in the chat, and what the model reads, when a write to a
    protected path is refused unasked: `client` says why the client was not asked."""
    subject = args.get("path") or tool
    told = (
        f"Refused: {tool} {subject}. {why}; {client}, and a permission request there may "
        'be answered without you (an "approve all" setting), so none was sent. To make '
        "this change, write the file yourself, or run the session in elelem's terminal or "
        "the VS Code or Neovim client and allow it there."
    )
    reason = (
        f"Refused: {tool} {subject} ({why}; a write there decides what runs later, and "
        f"{client}, so no one was asked). Do not retry it; tell the user what you meant to "
        "write: they can write the file themselves, or allow it from elelem's terminal or "
        "an editor client."
    )
    return told, reason


def register(plugin: Plugin) -> None:
    @plugin.setup
    def permissions(session: SessionView) -> None:
        """(Re)read the policy; an "always" or "never" answer outlives /reload."""
        old = getattr(session, "permissions", None)
        policy = Policy.load(session.cwd, session.project, session.rules)
        if isinstance(old, Policy):
            policy.always, policy.never = old.always, old.never
        for problem in policy.problems:
            notice(f"elelem: permissions: {problem}")
        session.permissions = policy

    @plugin.before()
    async def permission(session: SessionView, args: dict[str, Any], tool_name: str) -> None:
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
        why = guarded(session, tool_name, args)
        try:
            answer = await ask(
                session.input,
                question(tool_name, args, why),
                PROTECTED_OPTIONS if why else OPTIONS,
                kind="permission",
                tool=tool,
                **({"user_only": True} if why else {}),  # no approve-all setting answers it
            )
        except CannotAsk as exc:
            told, reason = refusal(tool_name, args, why or "", str(exc))
            session.output.say(told)
            raise PermissionDenied(reason) from None
        if answer is None:
            raise PermissionDenied(f"Permission denied: {tool_name} ({NO_ANSWER})")
        choice = ANSWERS.get(answer.strip().lower())
        if choice is None:
            raise PermissionDenied(f"User denied permission: {tool_name}")
        if choice == "never":
            policy.never.add(tool_name)
            raise PermissionDenied(f"User denied permission: {tool_name}")
        if choice == "always" and not why:  # for a protected path: this once
            policy.always.add(tool_name)
