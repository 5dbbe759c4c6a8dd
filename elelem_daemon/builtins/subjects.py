"""What a `TOOL:SUBJECT` permission rule matches in a call (docs/permissions.md,
"The files" and "What a command runs"): the command, read by a shell parser
(safety/commands.py), or the path, resolved.

A strict rule (`ask`, `deny`) covers a command when its glob covers the command as
given or any program it would run (wrappers unwrapped, equivalents included). A
permissive one (`allow`, `ask-outside`, `review`) covers only one simple command, as
given, that the parser can read whole, whose checked options are on their allow-list
(safety/options.py), and, while a deny rule watches `execute`, that runs no code a
rule cannot see (`python -c`, `make`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ports import SessionView
from ..safety.commands import Parsed, Program, parse
from ..safety.options import uncovered
from .files import resolve

# What makes a command more than one simple command: a permissive rule with a subject
# (`execute:echo* allow`) never covers it.
SHELL_CONTROL = re.compile(r"[;&|`<>\n\r]|\$[({]")
PERMISSIVE = frozenset({"allow", "ask-outside", "review"})


@dataclass(frozen=True)
class Subject:
    """What a `TOOL:SUBJECT` rule matches in a call (`subject_of`)."""

    text: str  # the command as given, or the path resolved
    command: bool  # a command (else a path)
    outside: bool = False  # a path out of the folder (`text` is then absolute)
    parsed: Parsed = field(default_factory=Parsed)  # what the command runs


def matches(
    glob: str | None, rule: str, subject: Subject | None, denied: Sequence[str] = ()
) -> bool:
    """Whether a rule (its subject glob and its rule) covers the call: a rule with no
    subject covers every call (the module's docstring says the rest). `denied`: the
    globs of the deny rules with a subject that name the tool; while there is one, a
    permissive glob covers no command that runs code no rule sees, and none whose
    wrapped or equivalent programs a deny glob covers (`execute:find* allow` does not
    run `find . -delete` past `execute:rm * deny`)."""
    if glob is None:
        return True
    if subject is None:
        return False
    text, permissive = subject.text, rule in PERMISSIVE
    if subject.outside and permissive and not glob.startswith("/"):
        return False
    if not subject.command:
        return fnmatch.fnmatchcase(text, glob)
    parsed = subject.parsed
    if permissive:
        if SHELL_CONTROL.search(text) or not parsed.simple or (denied and parsed.code):
            return False
        if any(uncovered(program) is not None for program in parsed.programs):
            return False
        if any(covers(deny, parsed.programs[1:]) for deny in denied):
            return False
        return fnmatch.fnmatchcase(text, glob)
    return fnmatch.fnmatchcase(text, glob) or covers(glob, parsed.programs)


def covers(glob: str, programs: Sequence[Program]) -> bool:
    """Whether a glob covers any of the programs, by name or as written."""
    return any(
        fnmatch.fnmatchcase(program.text, glob) or fnmatch.fnmatchcase(program.written, glob)
        for program in programs
    )


def doubt(parsed: Parsed) -> str | None:
    """Why a deny rule cannot be checked against this command, or None."""
    if parsed.unknown:
        return f"elelem cannot tell what it runs: {'; '.join(parsed.unknown[:3])}"
    return None


def subject_of(
    session: SessionView, args: dict[str, Any], parsed: Parsed | None = None
) -> Subject | None:
    """What a `TOOL:SUBJECT` rule matches: the call's command as given (and what it
    runs: `parsed`, or read here), or its path resolved (relative to the folder
    inside it, absolute outside it)."""
    command, path = args.get("command"), args.get("path")
    if isinstance(command, str):
        return Subject(command, command=True, parsed=parsed or parse(command))
    if not isinstance(path, str):
        return None
    try:
        resolved = resolve(session, path)
    except (OSError, RuntimeError, ValueError):
        return None
    if resolved.is_relative_to(session.cwd):
        return Subject(resolved.relative_to(session.cwd).as_posix(), command=False)
    return Subject(str(resolved), command=False, outside=True)
