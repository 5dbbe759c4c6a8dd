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

An `execute` rule's subject is matched against the programs the command would run,
read by a shell parser (subjects.py, safety/commands.py); while a deny rule with a
subject names `execute`, a command whose programs cannot be told asks whatever was
allowed or answered `always`, and one that runs code no rule sees (`python -c`,
`make`) is covered by no allow rule with a subject nor by `always`. A strict rule
naming `write` names every tool that changes files.

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

import asyncio
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import regular
from ..base.log import notice
from ..edits.changes import check_fresh, reviewer
from ..edits.filesystem import hard_links
from ..io import CannotAsk, ask
from ..ports import SessionView
from ..registry import Plugin
from ..safety import vetted
from ..safety.commands import Parsed
from ..safety.commands import parse as parse_command
from ..safety.protected import protected
from .files import preview, resolve
from .permission_questions import question, refusal
from .permission_rules import (
    DEFAULTS,
    REVIEWED,
    REVIEWING,
    REVIEWING_SOURCE,
    RULES,
    STRICT,
    STRICTNESS,
    WRITING_KINDS,
    Rule,
    parse,
    project_file,
    rule_of,
    user_file,
)
from .subjects import Subject, doubt, matches, subject_of

__all__ = ["NO_ANSWER", "Policy", "PermissionDenied", "Rule", "parse", "rule_of"]

RULES_CAP = 1 << 20  # bytes of a permissions file

OPTIONS = ["allow", "deny", "always", "never"]
PROTECTED_OPTIONS = ["allow", "deny", "never"]  # "always" would not hold for these
ANSWERS = {
    "allow": "allow", "yes": "allow", "y": "allow",
    "always": "always", "a": "always", "never": "never",
}  # fmt: skip
NO_ANSWER = "the user must approve it, and no one could answer"
READ_TIMEOUT = 5.0  # seconds to read what a command runs


class PermissionDenied(Exception):
    """Raised by the hook: the call does not run and the model reads why."""


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
            if not of_project and not vetted.approved(path):  # held (safety/vetted.py)
                more = [r for r in more if STRICTNESS[r.rule] >= STRICTNESS["ask"]]
                bad.append(f"{path}: {vetted.PROBLEM}; only its ask and deny rules apply")
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
        writes: bool = False,
    ) -> str:
        """The user's last matching rule (a pattern may be an alias), unless the
        project's last matching rule is stricter. The defaults' catch-all `* allow`
        gives way to the tool's own `default`; a project's rule can only tighten it;
        the reviewing editor's defaults count only when `reviewing`. A strict rule
        (`ask`, `deny`) naming `write` names every tool that `writes` (edit, delete,
        move) too."""
        names = names or {}
        denied = self.denials(tool, names) if subject is not None and subject.command else []
        found: dict[bool, str] = {}
        for rule in reversed(self.rules):
            if rule.project in found:
                continue
            if not reviewing and rule.where.startswith(REVIEWING_SOURCE):
                continue
            named = names.get(rule.pattern, rule.pattern)
            if (
                named == tool
                or fnmatch.fnmatchcase(tool, rule.pattern)
                or (writes and named == "write" and rule.rule in STRICT)
            ) and matches(rule.subject, rule.rule, subject, denied):
                catch_all = rule.pattern == "*" and rule.where.startswith("defaults:")
                found[rule.project] = default if catch_all else rule.rule
            if len(found) == 2:
                break
        mine, theirs = found.get(False, default), found.get(True, "allow")
        return theirs if STRICTNESS[theirs] > STRICTNESS[mine] else mine

    def denials(self, tool: str, names: dict[str, str]) -> list[str]:
        """The globs of the deny rules with a subject that name this tool. While there
        is one, a command whose programs cannot be told asks, and one that runs code
        no rule sees is covered by no allow rule with a subject nor by an `always`
        answer (docs/permissions.md, "What a command runs")."""
        return [
            rule.subject
            for rule in self.rules
            if rule.rule == "deny"
            and rule.subject is not None
            and (
                names.get(rule.pattern, rule.pattern) == tool
                or fnmatch.fnmatchcase(tool, rule.pattern)
            )
        ]

    def verdict(
        self, session: SessionView, tool: str, args: dict[str, Any], parsed: Parsed | None = None
    ) -> str:
        """allow, review, ask or deny for this call. A tool may carry its own default
        rule (`permission`, e.g. `ask` for MCP tools), which any rule naming it overrides.
        `parsed`: what the call's command runs, when the caller read it already."""
        names = {p.pattern: session.toolbox.resolve(p.pattern).name for p in self.rules}
        found = session.toolbox.resolve(tool)
        default = getattr(found, "permission", None)
        by = reviewer(session)
        subject = subject_of(session, args, parsed)
        rule = self.rule(
            tool,
            names,
            default if default in RULES else "allow",
            by == "editor",
            subject,
            tool in REVIEWED or getattr(found, "kind", None) in WRITING_KINDS,
        )
        if rule == "deny":
            return "deny"
        watched = subject is not None and subject.command and bool(self.denials(tool, names))
        if watched and subject is not None and subject.parsed.unknown:
            return "ask"  # it may be the denied program: no rule nor `always` covers it
        if guarded(session, tool, args):
            return "ask"  # whatever the rules and the `always` answers say
        held = watched and subject is not None and bool(subject.parsed.code)
        if (tool in self.always and not held) or rule == "allow":
            return "allow"
        if rule == "ask-outside":
            return "ask" if outside(session, args) else "allow"
        if rule == "review" and tool in REVIEWED and not outside(session, args):
            return "review" if by is not None else "ask"
        return "ask"

    def doubt(self, session: SessionView, tool: str, parsed: Parsed | None) -> str | None:
        """Why a call that a deny rule watches asks whatever was allowed, or None."""
        names = {p.pattern: session.toolbox.resolve(p.pattern).name for p in self.rules}
        if parsed is None or not self.denials(tool, names):
            return None
        if parsed.unknown:
            return f"a deny rule is set, and {doubt(parsed)}"
        if parsed.code:
            return (
                f"a deny rule is set, and it runs code no rule sees ({parsed.code[0][:80]}); "
                "only a rule without a command pattern (`execute allow`) covers it"
            )
        return None


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


async def read_command(command: str) -> Parsed:
    """What a command runs, read off the event loop (64 KiB cost ~0.4 s at worst); past
    READ_TIMEOUT it cannot be told (the thread ends on its own: the text is bounded)."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(parse_command, command), READ_TIMEOUT)
    except TimeoutError:
        parsed = Parsed()
        parsed.cannot_tell(f"reading the command took more than {READ_TIMEOUT:g} s")
        return parsed


def policy_of(session: SessionView) -> Policy:
    policy = getattr(session, "permissions", None)
    if not isinstance(policy, Policy):
        policy = Policy.load(session.cwd, session.project, session.rules)
        session.permissions = policy
    return policy


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
        command = args.get("command")
        parsed = await read_command(command) if isinstance(command, str) else None
        verdict = policy.verdict(session, tool_name, args, parsed)
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
        held = policy.doubt(session, tool_name, parsed)
        try:
            answer = await ask(
                session.input,
                question(tool_name, args, why, held),
                PROTECTED_OPTIONS if why or held else OPTIONS,
                kind="permission",
                tool=tool,
                # no approve-all setting answers it (nor a command it cannot tell)
                **({"user_only": True} if why or (held and parsed and parsed.unknown) else {}),
                **({"held": held} if held else {}),  # the headless face says it, not `--allow`
            )
        except CannotAsk as exc:
            told, reason = refusal(tool_name, args, why or held or "", str(exc))
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
