"""Blocks: the one format in which attached context reaches the model.

A user message with attachments is the user's text, then each attachment's block,
every block after a blank line:

    explain @src/app.py, the failing part

    <attachment type="file" path="src/app.py">
    def main():
        ...
    </attachment>

    <attachment type="diagnostics" path="src/app.py">
    src/app.py:12:5: error: "x" is not defined (pyright)
    </attachment>

- A block opens with `<attachment` and its attributes, on one line, and closes with
  `</attachment>` at the start of a line. `type` comes first, then the others in the
  order `ATTRIBUTES` gives; each value is in double quotes, with `&`, `"`, `<`, `>`
  and line breaks written as `&amp;` `&quot;` `&lt;` `&gt;` `&#10;` `&#13;`.
- The body is the content as it is (source code is not escaped), and ends with a
  line break (one is added when the content has none; an empty body is no line).
- Nothing else can open or close a block, nor forge one: in the user's text and in
  every body, `<` followed by any backslashes and `attachment` or `/attachment` (any
  case) gets one backslash more, so `</attachment>` in a file reads `<\\/attachment>`.
  `parse` takes exactly one away again: the format is reversible.
- The same input gives the same bytes.

Names an editor or client sends (paths, symbol names, a diagnostic's source, ACP
resource names and URIs) pass through `visible` before they reach the model or the
system prompt: a control character (C0, DEL, C1), a line or paragraph separator
(U+2028, U+2029), a bidirectional control (U+200E, U+200F, U+202A-U+202E,
U+2066-U+2069), a zero-width or invisible character (U+200B-U+200D, U+2060-U+206F,
U+FEFF) or a tag character (U+E0000-U+E007F, invisible text a model still reads) is
written as its escape, `\\n`, `\\r`, `\\t`, `\\x1b`, `\\u2028`, `\\U000e0041`, so a name such as
`a<LF>- IMPORTANT: ...` reads `a\\n- IMPORTANT: ...` on its own line and can write
none of its own. A backslash already in a name stays one (the escape is for reading,
not reversible). Bodies (file text, a selection) and the user's own text are content
and stay as they are; a diagnostic's message keeps its line breaks, each followed
by an indent (expansion.py). (The terminal's screen has its own rule for people,
faces/terminal/visible.py, with symbols; the model reads escapes it can quote back.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# attribute order after `type`; an unknown attribute comes after these, sorted
ATTRIBUTES = ("name", "path", "lines", "mimeType", "note")

_OPEN_OR_CLOSE = re.compile(r"<(\\*)(/?attachment)", re.IGNORECASE)
_ESCAPED = re.compile(r"<\\(\\*)(/?attachment)", re.IGNORECASE)
_BLOCK = re.compile(
    r"<attachment(?P<attrs>(?: [A-Za-z]+=\"[^\"]*\")*)>\n(?P<body>.*?)(?<=\n)</attachment>",
    re.DOTALL,
)
_ATTR = re.compile(r' ([A-Za-z]+)="([^"]*)"')
_QUOTED = {"&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;", "\n": "&#10;", "\r": "&#13;"}
_UNQUOTED = {v: k for k, v in _QUOTED.items()}


_HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\U000e0000-\U000e007f]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(name: str) -> str:
    """A name an editor sent, with every control or invisible line-breaking character
    written as its escape (see the module docstring)."""
    return _HIDDEN.sub(_shown, name)


def escape(text: str) -> str:
    """Text that can neither open nor close a block."""
    return _OPEN_OR_CLOSE.sub(lambda m: f"<\\{m[1]}{m[2]}", text)


def unescape(text: str) -> str:
    return _ESCAPED.sub(lambda m: f"<{m[1]}{m[2]}", text)


def quote(value: str) -> str:
    return "".join(_QUOTED.get(c, c) for c in value)


def unquote(value: str) -> str:
    return re.sub(r"&(amp|quot|lt|gt|#10|#13);", lambda m: _UNQUOTED[m[0]], value)


def block(kind: str, body: str = "", **attributes: str | None) -> str:
    """One attachment block; attributes that are None are left out."""
    given = {k: v for k, v in attributes.items() if v is not None}
    order = [k for k in ATTRIBUTES if k in given] + sorted(k for k in given if k not in ATTRIBUTES)
    head = "".join(f' {k}="{quote(str(given[k]))}"' for k in order)
    body = escape(body)
    if body and not body.endswith("\n"):
        body += "\n"
    return f'<attachment type="{quote(kind)}"{head}>\n{body}</attachment>'


def message(text: str, blocks: Iterable[str]) -> str:
    """The user's text (escaped) then each block after a blank line."""
    return escape(text) + "".join(f"\n\n{b}" for b in blocks)


def parse(content: str) -> tuple[str, list[tuple[dict[str, str], str]]]:
    """The user's text and each block's attributes and body, as `message` wrote them."""
    found = list(_BLOCK.finditer(content))
    if not found:
        return unescape(content), []
    first = found[0].start()
    text = content[: first - 2] if content[first - 2 : first] == "\n\n" else content[:first]
    blocks = []
    for match in found:
        attrs = {k: unquote(v) for k, v in _ATTR.findall(match["attrs"])}
        blocks.append((attrs, unescape(match["body"])))
    return unescape(text), blocks
