"""Render a terminal capture (`tmux capture-pane -e -p`) to a PNG with Pillow.

Usage: python ansi2png.py CAPTURE.ans OUT.png [--font FONT.ttf] [--size 14]

Understands the SGR sequences tmux emits: 16/256/24-bit colours, bold, italic, underline,
reverse and their resets. Wide characters take two cells.
"""

from __future__ import annotations

import argparse
import re
import unicodedata
from dataclasses import dataclass, replace

from PIL import Image, ImageDraw, ImageFont

FG, BG = (0xE0, 0xE2, 0xEA), (0x14, 0x16, 0x1B)  # Neovim's default dark colours
BASE16 = [
    (0x07, 0x08, 0x0D),
    (0xFF, 0xC0, 0xB9),
    (0xB3, 0xF6, 0xC0),
    (0xFC, 0xE0, 0x94),
    (0xA6, 0xDB, 0xFF),
    (0xFF, 0xCA, 0xFF),
    (0x8C, 0xF8, 0xF7),
    (0xE0, 0xE2, 0xEA),
    (0x4F, 0x52, 0x58),
    (0xFF, 0xC0, 0xB9),
    (0xB3, 0xF6, 0xC0),
    (0xFC, 0xE0, 0x94),
    (0xA6, 0xDB, 0xFF),
    (0xFF, 0xCA, 0xFF),
    (0x8C, 0xF8, 0xF7),
    (0xEE, 0xF1, 0xF8),
]
SGR = re.compile(r"\x1b\[([0-9;:]*)m")
OTHER = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07|[()][A-Z0-9])")
FONTS = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono{}.ttf"


def xterm256(n: int) -> tuple[int, int, int]:
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return steps[n // 36], steps[(n // 6) % 6], steps[n % 6]
    level = 8 + (n - 232) * 10
    return level, level, level


@dataclass(frozen=True)
class Style:
    fg: tuple[int, int, int] | None = None
    bg: tuple[int, int, int] | None = None
    bold: bool = False
    italic: bool = False
    underline: bool = False
    reverse: bool = False


def apply(style: Style, params: str) -> Style:
    codes = [int(c) if c else 0 for c in params.replace(":", ";").split(";")] or [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            style = Style()
        elif c in (1, 3, 4, 7):
            key = {1: "bold", 3: "italic", 4: "underline", 7: "reverse"}[c]
            style = replace(style, **{key: True})
        elif c in (22, 23, 24, 27):
            key = {22: "bold", 23: "italic", 24: "underline", 27: "reverse"}[c]
            style = replace(style, **{key: False})
        elif 30 <= c <= 37 or 90 <= c <= 97:
            style = replace(style, fg=BASE16[c - 30 if c < 90 else c - 82])
        elif 40 <= c <= 47 or 100 <= c <= 107:
            style = replace(style, bg=BASE16[c - 40 if c < 100 else c - 92])
        elif c == 39:
            style = replace(style, fg=None)
        elif c == 49:
            style = replace(style, bg=None)
        elif c in (38, 48) and i + 1 < len(codes):
            key = "fg" if c == 38 else "bg"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                style = replace(style, **{key: xterm256(codes[i + 2])})
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                style = replace(style, **{key: tuple(codes[i + 2 : i + 5])})
                i += 4
        i += 1
    return style


def cells(line: str) -> list[tuple[str, Style, int]]:
    """(character, style, width in cells) for each visible character of one line."""
    out: list[tuple[str, Style, int]] = []
    style = Style()
    pos = 0
    for match in SGR.finditer(line + "\x1b[m"):
        for ch in OTHER.sub("", line[pos : match.start()]):
            if unicodedata.combining(ch):
                continue
            wide = unicodedata.east_asian_width(ch) in ("W", "F")
            out.append((ch, style, 2 if wide else 1))
        style = apply(style, match.group(1))
        pos = match.end()
    return out


def suffix(bold: bool, italic: bool) -> str:
    if not (bold or italic):
        return ""
    return "-" + ("Bold" if bold else "") + ("Oblique" if italic else "")


def render(text: str, font_path: str, size: int, columns: int | None) -> Image.Image:
    fonts = {
        (b, it): ImageFont.truetype(font_path.format(suffix(b, it)), size)
        for b in (False, True)
        for it in (False, True)
    }
    regular = fonts[(False, False)]
    cell_w = round(regular.getlength("M"))
    ascent, descent = regular.getmetrics()
    cell_h = ascent + descent + 2
    rows = [cells(line) for line in text.rstrip("\n").split("\n")]
    width = columns or max(sum(w for _, _, w in row) for row in rows)
    image = Image.new("RGB", (width * cell_w, len(rows) * cell_h), BG)
    draw = ImageDraw.Draw(image)
    for y, row in enumerate(rows):
        x = 0
        for ch, style, w in row:
            fg, bg = style.fg or FG, style.bg or BG
            if style.reverse:
                fg, bg = bg, fg
            box = (x * cell_w, y * cell_h, (x + w) * cell_w, (y + 1) * cell_h)
            if bg != BG:
                draw.rectangle((box[0], box[1], box[2] - 1, box[3] - 1), fill=bg)
            if ch != " ":
                font = fonts[(style.bold, style.italic)]
                draw.text((box[0], box[1] + 1), ch, font=font, fill=fg)
            if style.underline:
                draw.line((box[0], box[3] - 2, box[2], box[3] - 2), fill=fg)
            x += w
    return image


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture")
    parser.add_argument("out")
    parser.add_argument("--font", default=FONTS, help="TTF path; {} takes -Bold/Oblique")
    parser.add_argument("--size", type=int, default=14)
    parser.add_argument("--columns", type=int)
    args = parser.parse_args()
    with open(args.capture, encoding="utf-8", errors="replace") as f:
        image = render(f.read(), args.font, args.size, args.columns)
    image.quantize(colors=128).save(args.out, optimize=True)


if __name__ == "__main__":
    main()
