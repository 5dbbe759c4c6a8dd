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
from .words import value

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
EVALUATING = frozenset(
    {"arithmetic_expansion", "c_style_for_statement", "subscript", "expansion",
     "unset_command", "declaration_command", "compound_statement"}
)  # fmt: skip
OPERANDS = frozenset(
    {"variable_name", "simple_expansion", "expansion", "command_substitution", "word",
     "string", "raw_string", "concatenation"}
)  # fmt: skip
ARITHMETIC_TESTS = re.compile(rb"\s-(eq|ne|lt|le|gt|ge|v)\s")
REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


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
        elif node.type == "heredoc_redirect":
            _heredoc(node, parsed)
        if node.type in EVALUATING or node.type == "test_command":
            _evaluates(node, parsed)
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


def _evaluates(node: tree_sitter.Node, parsed: Parsed) -> None:
    """bash evaluates an arithmetic operand and an indexed array's subscript as an
    expression, and a subscript in it again, command substitutions included: a
    variable there (`x='a[$(rm x)]'; echo $((x))`), a subscript that is no number, a
    `[` in a name that `unset` or `declare` take, and `${x@P}` cannot be told."""
    kind, text = node.type, node.text or b""
    if kind == "subscript":
        index = node.child_by_field_name("index")
        computed = index is None or index.type != "number"
    elif kind == "expansion":
        computed = b"@P" in text  # a prompt expansion runs `$(…)` in the value
    elif kind in ("unset_command", "declaration_command"):
        computed = b"[" in text or any(
            c.type == "word" and c.text and c.text.startswith(b"-") and b"i" in c.text
            for c in node.children
        )  # `declare -i n=$x` evaluates $x
    elif kind == "test_command":
        computed = (
            bool(ARITHMETIC_TESTS.search(text))
            if text.startswith(b"[[")
            else (b"-v" in text and b"[" in text[1:])
        )  # `[ -v 'a[$(rm x)]' ]`
    elif kind == "compound_statement":
        computed = text.startswith(b"((") and _names(node)
    else:  # arithmetic_expansion, c_style_for_statement
        computed = _names(node)
    if computed:
        parsed.cannot_tell(
            "bash evaluates a computed word as an expression (arithmetic, a subscript)"
        )


def _names(node: tree_sitter.Node) -> bool:
    """Whether an arithmetic expression reads anything but numbers."""
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if child.type in OPERANDS:
            return True
        stack.extend(child.children)
    return False


def _heredoc(node: tree_sitter.Node, parsed: Parsed) -> None:
    """An unquoted here-document runs its substitutions; the grammar reads `$(…)` in
    one, not a backtick: a backtick there cannot be told."""
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    if start is None or set((start.text or b"").decode("utf-8", "replace")) & set("'\"\\"):
        return  # `<<'EOF'`: the body is text
    for child in node.children:
        if child.type == "heredoc_body" and b"`" in (child.text or b""):
            parsed.cannot_tell("a here-document runs a backtick substitution")


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
