"""Mentions: the `@` references a user types in a prompt, found the same way in every face.

    explain @src/app.py          the file
    look at @src/app.py:10-20    lines 10 to 20 (`:12` is one line)
    what is in @src/             a folder: a bounded listing of its files
    see @docs/a.md, then …       trailing `.,;:!?)]}'"` is not part of the path

What is a mention:
- an `@` at the start of the text or after a space or one of `([{"'`, so an e-mail
  address (`me@example.com`) is not one;
- followed by a path that exists, relative to the session's cwd and, once symbolic
  links and `..` are followed, inside it; a folder with or without its trailing `/`.
  Anything else (`@decorator`, `@someone`, `@/etc/passwd`, `@../x`) stays plain text,
  and a word that reads as a path (`@../x.txt`, `@missing.py`) is said to the user as
  attaching nothing (`missed`, expansion.for_session);
- outside code: not inside a backtick span (`` `@x` ``) nor a fenced block (``` or ~~~);
- not escaped: `\\@src/app.py` is the text `@src/app.py`, no mention (the backslash is
  removed; inside code nothing is).

`find` returns the text the model reads (escapes removed) and the mentions in the
order they appear, each path and range once; a range on an existing
file that ends before it starts, or starts at 0, is an AttachmentError. At most
MAX_MENTIONS; the stat calls run in the caller's thread (the core runs `find` in one).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import AttachmentError

MAX_MENTIONS = 20
MAX_CANDIDATES = 100  # `@` words looked at; the rest stay text
MAX_WORD = 4096 + 32  # a longer word is no path (PATH_CAP and a range)
MAX_STRIPPED = 8  # trailing punctuation characters tried off a word
OPENERS = frozenset(" \t\n\r([{\"'")
TRAILING = ".,;:!?)]}'\""
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")
_RANGE = re.compile(r"^(?P<path>.+?):(?P<first>\d+)(?:-(?P<last>\d+))?$")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Mention:
    text: str  # as typed, without the `@`: `src/app.py:10-20`
    path: str  # relative to cwd, with `/`; a folder ends with `/`
    first: int | None = None  # 1-based lines, inclusive
    last: int | None = None

    @property
    def folder(self) -> bool:
        return self.path.endswith("/")


def code_spans(text: str) -> list[tuple[int, int]]:
    """Where the fenced blocks and backtick spans of text are (start, end)."""
    spans, at, fence, fence_start = [], 0, "", 0
    plain: list[tuple[int, int]] = []
    for line in text.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened[1][0] == fence[0] and len(opened[1]) >= len(fence):
                if not line[opened.end() :].strip():
                    spans.append((fence_start, at + len(line)))
                    fence = ""
        elif opened:
            fence, fence_start = opened[1], at
        else:
            plain.append((at, at + len(line)))
        at += len(line)
    if fence:
        spans.append((fence_start, len(text)))
    for start, end in _merge(plain):
        spans += backtick_spans(text, start, end)
    return sorted(spans)


def backtick_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Code spans in text[start:end]: a run of N backticks up to the next run of exactly
    N (CommonMark). Linear: per length, a pointer that only moves forward."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text, start, end)]
    by_length: dict[int, list[int]] = {}
    for n, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(n)
    next_of = dict.fromkeys(by_length, 0)
    spans, n = [], 0
    while n < len(runs):
        length = runs[n][1] - runs[n][0]
        same, at = by_length[length], next_of[length]
        while at < len(same) and same[at] <= n:
            at += 1
        next_of[length] = at
        if at == len(same):
            n += 1
            continue
        spans.append((runs[n][0], runs[same[at]][1]))
        n = same[at] + 1
    return spans


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in ranges:
        if out and out[-1][1] == start:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def find(text: str, cwd: Path, missed: list[str] | None = None) -> tuple[str, list[Mention]]:
    """The text without its `\\@` escapes, and the mentions in it (see the docstring).
    A word that reads as a path but names none inside cwd is said in `missed`."""
    cwd = cwd.resolve()
    code = code_spans(text)
    starts = [start for start, _ in code]
    out: list[str] = []
    mentions: list[Mention] = []
    seen: set[tuple[str, int | None, int | None]] = set()
    at = looked = 0
    for index in (i for i, c in enumerate(text) if c == "@"):
        if _inside(index, code, starts):
            continue
        if index and text[index - 1] == "\\":
            out.append(text[at : index - 1])
            at = index
            continue
        if (index and text[index - 1] not in OPENERS) or looked >= MAX_CANDIDATES:
            continue
        looked += 1
        word = _WORD.match(text, index + 1, index + 2 + MAX_WORD)  # one past: too long
        mention = resolve(word[0], cwd) if word and len(word[0]) <= MAX_WORD else None
        if mention is None and word and missed is not None and len(missed) < MAX_MENTIONS:
            if (why := why_not(word[0], cwd)) is not None:
                missed.append(f"@{why[0][:200]} attaches nothing: {why[1]}")
        if mention is None or (key := (mention.path, mention.first, mention.last)) in seen:
            continue
        if len(mentions) >= MAX_MENTIONS:
            raise AttachmentError(
                f"@{mention.text}: at most {MAX_MENTIONS} files or folders can be mentioned "
                "in one message",
                reason="too_many",
                mention=f"@{mention.text}",
                field="text",
            )
        seen.add(key)
        mentions.append(mention)
    out.append(text[at:])
    return "".join(out), mentions


def resolve(word: str, cwd: Path) -> Mention | None:
    """The mention a word after `@` makes, trying it whole, then without each trailing
    punctuation character in turn; None when no form names a path inside cwd."""
    for form in _forms(word):
        ranged = _RANGE.match(form)
        if ranged and (found := _existing(ranged["path"], cwd)) and not found.endswith("/"):
            first = int(ranged["first"])
            last = int(ranged["last"]) if ranged["last"] else first
            if first < 1 or last < first:
                raise AttachmentError(
                    f"@{form}: a line range is FIRST-LAST, from line 1 on, with LAST >= FIRST",
                    reason="invalid",
                    mention=f"@{form}",
                    field="text",
                )
            return Mention(form, found, first, last)
        if found := _existing(form, cwd):
            return Mention(form, found)
    return None


def why_not(word: str, cwd: Path) -> tuple[str, str] | None:
    """A word that reads as a path (it holds `/`, or a dot before a name's ending) but
    is no mention: the word without trailing punctuation, and why; None for a word that
    is no path (`@decorator`, `@someone`)."""
    forms = _forms(word)
    form = forms[-1] if forms else word
    ranged = _RANGE.match(form)
    path = ranged["path"] if ranged else form
    if "/" not in path and not re.search(r"\w\.\w+$", path):
        return None
    try:
        resolved = (cwd / path).resolve()
        if path.startswith("~") or not resolved.is_relative_to(cwd) or resolved == cwd:
            return form, "it is outside the working directory"
    except (OSError, ValueError, RuntimeError):
        return form, "it names no file"
    return form, "no such file or folder"


def _forms(word: str) -> list[str]:
    forms = [word]
    while forms[-1] and forms[-1][-1] in TRAILING and len(forms) <= MAX_STRIPPED:
        forms.append(forms[-1][:-1])
    return [form for form in forms if form]


def _existing(path: str, cwd: Path) -> str | None:
    """path relative to cwd (folders with `/`) if it exists inside cwd."""
    if "\0" in path or path.startswith("~") or len(path) > 4096:
        return None
    try:
        resolved = (cwd / path).resolve()
        if not resolved.is_relative_to(cwd) or resolved == cwd:
            return None
        folder = resolved.is_dir()
        if not folder and not resolved.exists():
            return None
    except (OSError, ValueError, RuntimeError):
        return None
    shown = Path(path.rstrip("/")).as_posix() if not Path(path).is_absolute() else ""
    shown = (
        shown if shown and ".." not in shown.split("/") else resolved.relative_to(cwd).as_posix()
    )
    return f"{shown}/" if folder else shown


def _inside(index: int, spans: list[tuple[int, int]], starts: list[int]) -> bool:
    """Whether index is in one of the sorted, non-overlapping spans."""
    at = bisect_right(starts, index) - 1
    return at >= 0 and index < spans[at][1]
