"""What a shell command line would run: every program it starts, found by a real shell
parser (tree-sitter with the tree-sitter-bash grammar), so a permission rule that
names a program (`execute:rm * deny`) holds however the program is spelled.

`parse(text)` reads a command line as bash would and returns `Parsed`:
- `programs`: each simple command in pipelines, lists, subshells, groups, functions,
  command and process substitutions, with quotes and escapes removed and the program
  named by its base name (`/bin/rm`, `\\rm`, `'rm'`, `r''m` are all `rm`), then what
  the wrappers among them run (`env rm`, `xargs rm`, `sh -c 'rm x'`, `find -exec rm`:
  wrappers.py), and the equivalents (`find -delete` counts as `rm`);
- `unknown`: why it cannot tell what runs (a program named by `$(…)` or a variable,
  `eval`, `source`, a parse error, a command past the bounds);
- `code`: the commands that run code no rule sees (`python -c`, `sh FILE`, `make`).

Bounds: 64 KiB of text, 200,000 syntax nodes, 1,000 programs, `sh -c` strings four
deep; past any of them the answer is "cannot tell". This is a reading of the command,
not a sandbox: docs/permissions.md says what it leaves open.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from . import wrappers

if TYPE_CHECKING:
    import tree_sitter

MAX_BYTES = 64 * 1024
MAX_NODES = 200_000
MAX_PROGRAMS = 1_000
MAX_NESTING = 4
SUBSTITUTIONS = frozenset(
    {"command_substitution", "process_substitution", "expansion", "simple_expansion",
     "arithmetic_expansion", "brace_expression"}
)  # fmt: skip
REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
ESCAPED_IN_DOUBLE_QUOTES = '$`"\\\n'
GLOB = frozenset("*?[")
ANSI_C_OTHER = re.compile(r"\\[^ntrabfvx0-7'\"\\?]")  # `\\cX`, `\\E`, `\\u…`: not decoded here


@cache
def _language() -> tree_sitter.Language:
    """The bash grammar, loaded at the first command read (not at start-up: a face that
    runs no command pays nothing for it)."""
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Language(tree_sitter_bash.language())


@dataclass(frozen=True)
class Program:
    """One program that would run: its base name, then its arguments as bash passes
    them (a word bash computes is kept as written, `$x`)."""

    argv: tuple[str, ...]
    spelled: str = ""  # the program's word as written, unquoted (`/bin/rm`)

    @property
    def name(self) -> str:
        return self.argv[0]

    @property
    def text(self) -> str:
        return " ".join(self.argv)

    @property
    def written(self) -> str:
        """With the program's name as written (`/bin/rm -f x`)."""
        return " ".join((self.spelled or self.name, *self.argv[1:]))


@dataclass
class Parsed:
    """What a command line runs (see the module's docstring)."""

    programs: list[Program] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    simple: bool = False  # one simple command, nothing around it (no redirect either)

    def cannot_tell(self, why: str) -> None:
        if why not in self.unknown and len(self.unknown) < 20:
            self.unknown.append(why)

    def runs_code(self, text: str) -> None:
        if text not in self.code and len(self.code) < 20:
            self.code.append(text)

    def add(self, program: Program) -> bool:
        if len(self.programs) >= MAX_PROGRAMS:
            self.cannot_tell(f"more than {MAX_PROGRAMS} programs")
            return False
        self.programs.append(program)
        return True


def parse(text: str) -> Parsed:
    parsed = Parsed()
    _read(text, parsed, 0)
    top = parsed.programs[:1]
    parsed.simple = parsed.simple and not parsed.unknown and bool(top)
    return parsed


def _read(text: str, parsed: Parsed, depth: int) -> None:
    """Add what one command line runs (at `depth` of `sh -c` nesting) to `parsed`."""
    source = text.encode("utf-8", "surrogatepass")
    if len(source) > MAX_BYTES:
        parsed.cannot_tell(f"the command is longer than {MAX_BYTES} bytes")
        return
    if depth > MAX_NESTING:
        parsed.cannot_tell(f"shells nested more than {MAX_NESTING} deep")
        return
    import tree_sitter

    root = tree_sitter.Parser(_language()).parse(source).root_node
    if root.has_error:
        parsed.cannot_tell("the command does not parse")
    commands, seen, stack = [], 0, [root]
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            parsed.cannot_tell(f"the command has more than {MAX_NODES} parts")
            return
        if node.type == "ERROR" or node.is_missing:
            parsed.cannot_tell("the command does not parse")
        elif node.type == "command":
            commands.append(node)
            if len(commands) > MAX_PROGRAMS:
                parsed.cannot_tell(f"more than {MAX_PROGRAMS} programs")
                return
        elif node.type == "variable_assignment":
            _assignment(node, parsed)
        stack.extend(reversed(node.children))
    if depth == 0:
        kinds = [child.type for child in root.named_children if child.type != "comment"]
        parsed.simple = kinds == ["command"] and len(commands) == 1
    for node in commands:
        argv = _words(node, parsed)
        if argv is not None:
            wrappers.unwrap(argv, parsed, lambda inner: _read(inner, parsed, depth + 1))


def _assignment(node: tree_sitter.Node, parsed: Parsed) -> None:
    name = node.child_by_field_name("name")
    if name is not None and (name.text or b"").decode("utf-8", "replace") in wrappers.STEERING:
        parsed.cannot_tell(f"it sets {(name.text or b'').decode('utf-8', 'replace')}")


def _words(node: tree_sitter.Node, parsed: Parsed) -> list[str | None] | None:
    """The words of a simple command, quotes removed (None: a word bash computes), or
    None when there is no program name."""
    argv: list[str | None] = []
    for child in node.children:
        if child.type in ("variable_assignment", "comment") or child.type in REDIRECTS:
            if child.type in REDIRECTS:
                parsed.simple = False
            continue
        if child.type == "command_name":
            word = child.named_children[0] if child.named_children else child
            argv.append(value(word, program=True))
        elif child.is_named:
            argv.append(value(child))
    return argv or None


def value(node: tree_sitter.Node, program: bool = False) -> str | None:
    """A word as bash passes it, or None when bash computes it (an expansion, a
    substitution, a brace expansion, or a glob in a program's name)."""
    kind, raw = node.type, (node.text or b"").decode("utf-8", "replace")
    if kind in ("word", "number"):
        if program and raw != "[" and (GLOB & set(raw) or ("{" in raw and "," in raw)):
            return None
        if "{" in raw and ("," in raw or ".." in raw):
            return None  # brace expansion
        return _unescape(raw)
    if kind == "raw_string":
        return raw[1:-1]
    if kind == "string":
        parts = [c for c in node.named_children if c.type != '"']
        if any(c.type != "string_content" for c in parts):
            return None
        return "".join(_unescape_quoted((c.text or b"").decode("utf-8", "replace")) for c in parts)
    if kind == "translated_string":
        inner = [c for c in node.named_children if c.type == "string"]
        return value(inner[0]) if inner else None
    if kind == "ansi_c_string":
        return _ansi_c(raw[2:-1])
    if kind == "concatenation":
        pieces = [value(c, program) for c in node.named_children]
        return None if any(p is None for p in pieces) else "".join(p or "" for p in pieces)
    return None


def _unescape(raw: str) -> str:
    out, chars = [], iter(raw)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            if following != "\n":
                out.append(following)
        else:
            out.append(char)
    return "".join(out)


def _unescape_quoted(raw: str) -> str:
    out, index = [], 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw) and raw[index + 1] in ESCAPED_IN_DOUBLE_QUOTES:
            if raw[index + 1] != "\n":
                out.append(raw[index + 1])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _ansi_c(raw: str) -> str | None:
    """`$'…'` as bash decodes it; None for an escape bash reads otherwise."""
    if ANSI_C_OTHER.search(raw):
        return None
    try:
        return raw.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return None
