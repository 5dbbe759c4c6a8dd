"""Words as bash passes them to a program: quotes and escapes removed, `$'…'`
decoded, and None for a word bash computes (commands.py reads a command line with it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

ESCAPED_IN_DOUBLE_QUOTES = '$`"\\\n'
GLOB = frozenset("*?[")
ANSI_C_OTHER = re.compile(r"\\[^ntrabfvx0-7'\"\\?]")  # `\\cX`, `\\E`, `\\u…`: not decoded here


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
