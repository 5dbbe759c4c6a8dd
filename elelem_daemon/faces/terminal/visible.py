"""What the terminal shows of text it did not write (replies, thinking, tool arguments
and output, the permission question): every character that would act on the terminal
instead of being read is made visible.

- C0 controls and DEL become their Unicode control pictures (ESC -> `␛`, BEL -> `␇`,
  a lone CR -> `␍`), so no escape sequence reaches the terminal: no cursor move, no
  colour, no OSC 52 clipboard write, no hidden text (`ESC[8m`), no title change.
  Newline and tab stay; `\\r\\n` is a newline.
- C1 controls (U+0080-U+009F, e.g. CSI U+009B), format characters (bidi overrides and
  isolates such as U+202E, zero-width spaces, the BOM, soft hyphens, tag characters),
  line and paragraph separators and lone surrogates become `<U+202E>`. The zero-width
  joiner stays: emoji sequences need it.

`visible(text)` is the rule; `Visible(renderable)` applies it again to what rich
renders (a Markdown entity such as `&#x202E;` is decoded by the parser, after the
source was made visible).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.segment import Segment

# Cc but newline and tab; Cf (Unicode 15) but U+200D; Zl, Zp; Cs.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200c\u200e\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f\u2028\u2029\ud800-\udfff"
)
HIDDEN = re.compile(f"\r\n|[\x00-\x08\x0b-\x1f\x7f\x80-\x9f{_FORMAT}]")
DEL_PICTURE = "\u2421"


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r\n":
        return "\n"
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return DEL_PICTURE
    return f"<U+{code:04X}>"


def visible(text: str) -> str:
    """`text` with every character that could act on the terminal made visible."""
    return HIDDEN.sub(_shown, text) if HIDDEN.search(text) else text


def visible_line(text: str) -> str:
    """Like `visible`, and a newline shown as `␤` too: for text kept on one line."""
    return visible(text).replace("\n", "\u2424")


class Visible:
    """A rich renderable whose text segments go through `visible` (its own styles and
    control segments are rich's, and stay)."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Any]:
        from rich.segment import Segment

        segment: Segment
        for segment in console.render(self.renderable, options):
            if segment.control or not HIDDEN.search(segment.text):
                yield segment
            else:
                lines = segment.text.split("\n")  # rich's own line breaks stay
                yield Segment("\n".join(visible(line) for line in lines), segment.style)
