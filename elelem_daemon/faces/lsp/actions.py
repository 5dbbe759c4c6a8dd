"""The code actions an editor is offered, and the prompt each one runs.

Pure functions over plain data (the document's text, a range, the diagnostics the
client sent), so what is offered is testable without a client. Every action carries
its `command` from the start (`elelem.run` with one argument, a `Job`): Emacs 28's
Eglot has no `codeAction/resolve`. The argument comes back from the client in
`workspace/executeCommand`, so `job_of` checks it again as any hostile input.

A marked comment is a line that is only a comment whose text starts with `elelem:`,
in any of the usual comment syntaxes: `#`, `//`, `--`, `;`, `/* ... */`,
`<!-- ... -->`, `%`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MARKED = re.compile(
    r"^\s*(?:#+|//+|--+|;+|%+|/\*+|<!--)\s*elelem:\s*(?P<text>.*?)\s*(?:\*+/|-->)?\s*$"
)
SCAN_LINES = 200  # lines of a range searched for marked comments
MARKS_OFFERED = 3  # marked comments offered per request
DIAGNOSTICS_OFFERED = 5  # diagnostics offered per request
INSTRUCTION_CAP = 2000  # characters of a comment's instruction
QUOTE_CAP = 8000  # characters of the selection quoted in a prompt
MESSAGE_CAP = 2000  # characters of a diagnostic's message
LINE_CAP = 10_000_000  # a line or character number past this is absurd
TITLE_CAP = 60  # characters of a diagnostic's message in an action's title
NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")  # a mode's or a skill's name

COMMENT = "elelem: do what the comment says"
FIX = "elelem: fix this diagnostic"
EXPLAIN = "elelem: explain"
TEST = "elelem: write a test for this"
KINDS = ("comment", "fix", "explain", "test", "mode", "skill", "ask")


class BadJob(ValueError):
    """A command argument that is not a job this server made."""


@dataclass(frozen=True)
class Job:
    """What an action asks for: its kind, the document, the lines (0-based, inclusive),
    and what kind needs (the comment's instruction, the diagnostic's message, a mode's
    or skill's name, the user's free text)."""

    kind: str
    uri: str
    start: int
    end: int
    text: str = ""
    name: str = ""

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"kind": self.kind, "uri": self.uri}
        wire["lines"] = [self.start, self.end]
        if self.text:
            wire["text"] = self.text
        if self.name:
            wire["name"] = self.name
        return wire


def marked(line: str) -> str | None:
    """The instruction of a marked comment line, or None."""
    found = MARKED.match(line)
    if found is None or not found["text"].strip():
        return None
    return found["text"][:INSTRUCTION_CAP]


def lines_of(start: Any, end: Any) -> tuple[int, int]:
    """A range's lines, checked: absurd numbers are BadJob."""
    for value in (start, end):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= LINE_CAP:
            raise BadJob(f"a line number must be an integer from 0 to {LINE_CAP}")
    return (start, end) if start <= end else (end, start)


def offered(
    uri: str,
    lines: list[str],
    start: int,
    end: int,
    diagnostics: list[tuple[int, int, str]],
    modes: list[tuple[str, str]],
    skills: list[tuple[str, str]],
) -> list[tuple[str, str | None, Job]]:
    """(title, LSP kind, job) for each action offered on lines start..end of a document
    (`lines`: its text split), with the client's diagnostics (start line, end line,
    message) and the folder's modes and skills (name, description)."""
    start, end = lines_of(start, end)
    found: list[tuple[str, str | None, Job]] = []
    for number in range(start, min(end, start + SCAN_LINES, len(lines) - 1) + 1):
        instruction = marked(lines[number])
        if instruction is not None and len(found) < MARKS_OFFERED:
            title = COMMENT if not found else f"{COMMENT} (line {number + 1})"
            found.append((title, "quickfix", Job("comment", uri, number, number, instruction)))
    shown = diagnostics[:DIAGNOSTICS_OFFERED]
    for first, last, message in shown:
        first, last = lines_of(first, last)
        brief = " ".join(message.split())
        brief = brief if len(brief) <= TITLE_CAP else brief[: TITLE_CAP - 1] + "…"
        title = FIX if len(shown) == 1 else f"{FIX}: {brief}"
        found.append((title, "quickfix", Job("fix", uri, first, last, message[:MESSAGE_CAP])))
    found.append((EXPLAIN, None, Job("explain", uri, start, end)))
    found.append((TEST, None, Job("test", uri, start, end)))
    for name, description in modes:
        if NAME.match(name):
            title = f"elelem: {name} this" + (f" ({description})" if description else "")
            found.append((title[:120], None, Job("mode", uri, start, end, name=name)))
    for name, description in skills:
        if NAME.match(name):
            title = f"elelem: skill {name}" + (f": {description}" if description else "")
            found.append((title[:120], None, Job("skill", uri, start, end, name=name)))
    return found


def job_of(value: Any) -> Job:
    """A command's argument back from the client, checked field by field."""
    if not isinstance(value, dict):
        raise BadJob("the argument must be an object")
    kind, uri, lines = value.get("kind"), value.get("uri"), value.get("lines")
    if kind not in KINDS:
        raise BadJob(f"unknown kind: {str(kind)[:40]!r}")
    if not isinstance(uri, str) or len(uri) > 4096:
        raise BadJob("uri must be a string of at most 4096 characters")
    if not isinstance(lines, list) or len(lines) != 2:
        raise BadJob("lines must be [first, last]")
    start, end = lines_of(*lines)
    text, name = value.get("text", ""), value.get("name", "")
    if not isinstance(text, str) or len(text) > MESSAGE_CAP + INSTRUCTION_CAP:
        raise BadJob("text must be a string, not too long")
    if not isinstance(name, str) or (name and not NAME.match(name)):
        raise BadJob("name must be a mode's or a skill's name")
    if kind in ("mode", "skill") and not name:
        raise BadJob(f"a {kind} job needs its name")
    return Job(kind, uri, start, end, text, name)


def quote(lines: list[str], start: int, end: int) -> str:
    """Lines start..end of the document, numbered as the editor numbers them, cut."""
    shown, size = [], 0
    for number in range(start, min(end, len(lines) - 1) + 1):
        line = f"{number + 1}: {lines[number]}"
        size += len(line) + 1
        if size > QUOTE_CAP:
            shown.append("[... cut]")
            break
        shown.append(line)
    return "\n".join(shown)


def prompt(job: Job, path: str, lines: list[str]) -> str:
    """The turn's prompt for a job on `path` (as the session's folder names it)."""
    span = (
        f"line {job.start + 1}" if job.start == job.end else f"lines {job.start + 1}-{job.end + 1}"
    )
    where = f"{path}, {span}"
    quoted = quote(lines, job.start, job.end)
    block = f"\n\n```\n{quoted}\n```" if quoted else ""
    if job.kind == "comment":
        return (
            f"In {where}, a comment marked `elelem:` asks: {job.text}\n\n"
            f"Do what it says, editing {path} (read it first). Then remove that marked "
            "comment line, since it is done."
        )
    if job.kind == "fix":
        return f"Fix this diagnostic in {where}: {job.text}{block}\n\nRead {path} first."
    if job.kind == "explain":
        return f"Explain this code from {where}. Change nothing.{block}"
    if job.kind == "test":
        return (
            f"Write a test for this code from {where}, following the project's own tests "
            f"(find them first).{block}"
        )
    if job.kind == "ask":
        return f"{job.text}\n\n(The user is looking at {where}.){block}"
    if job.kind == "skill":
        return f"Use the skill `{job.name}` (read it with the skill tool) on {where}.{block}"
    return f"Do this mode's work on {where}.{block}"  # the mode was set before the turn
