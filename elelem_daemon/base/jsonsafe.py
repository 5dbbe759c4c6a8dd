"""JSON that stays JSON: what elelem reads is bounded, what it writes is standard.

Reading (`loads`): a text nested deeper than MAX_DEPTH (arrays and objects, 100) is
refused with a clear `ValueError` (`nested deeper than 100 levels`), also when it is
100,000 `[` long (the parser's own recursion ends in that error, never a
RecursionError); `NaN`, `Infinity` and `-Infinity` are not JSON and are refused; with
`finite=True` a number too large for a float (`1e999`, which Python reads as `inf`)
is refused too. Used for tool arguments (every provider, `providers/calls.py`) and
for every frame both editor faces receive.

Writing (`dumps`): `allow_nan=False` always; a value that still holds a non-finite
float (a plugin's result) is written with `null` in its place, as JavaScript's
`JSON.stringify` does, and one nested past MAX_DEPTH has that part replaced by a
string saying so. So nothing elelem writes to a client, a stored session or a
provider is text that `JSON.parse` rejects. `problem(value)` says what in an already
parsed value would not pass (the agent checks a provider's parsed arguments with it).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 100
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_STRING_BYTES = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_PAIR = re.compile(r"\[\]|\{\}")
_PAIR_BYTES = re.compile(rb"\[\]|\{\}")
_NOT_BRACKET = re.compile(r"[^\[\]{}]")
_NOT_BRACKET_BYTES = re.compile(rb"[^\[\]{}]")
FIND_FROM = 4096  # characters: a longer text's brackets are found, not counted (too_deep)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text[:40]} is not a finite number")
    return value


# built once: `json.loads` with any option builds a decoder per call (a stream parses
# one text per event); their scanners are called as `JSONDecoder.decode` calls them,
# without its two Python frames (`decode`, `raw_decode`): the same value, the same errors
_SCAN = json.JSONDecoder(parse_constant=_constant).scan_once  # type: ignore[attr-defined]
_SCAN_FINITE = json.JSONDecoder(  # type: ignore[attr-defined]
    parse_constant=_constant, parse_float=_float
).scan_once
_SPACE = json.decoder.WHITESPACE.match  # type: ignore[attr-defined]


def _decode(scan: Any, text: str) -> Any:
    """`JSONDecoder.decode(text)`, step for step (CPython's json/decoder.py)."""
    try:
        value, end = scan(text, _SPACE(text, 0).end())
    except StopIteration as err:
        raise json.JSONDecodeError("Expecting value", text, err.value) from None
    end = _SPACE(text, end).end()
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def loads(text: str | bytes, finite: bool = False, max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON text; ValueError if it is not JSON, too deep or (finite) not finite."""
    if isinstance(text, bytes | bytearray):  # as json.loads reads bytes
        if len(text) >= 2 and 0 < text[0] < 0x80 and text[1]:  # detect_encoding's UTF-8,
            text = text.decode("utf-8", "surrogatepass")  # without its calls: no BOM, no NUL
        else:
            text = text.decode(json.detect_encoding(text), "surrogatepass")  # type: ignore[attr-defined]
    elif not isinstance(text, str):
        raise TypeError(f"the JSON object must be str or bytes, not {type(text).__name__}")
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        value = _decode(_SCAN_FINITE if finite else _SCAN, text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    if too_deep(text, max_depth):
        raise ValueError(f"nested deeper than {max_depth} levels")
    return value


def too_deep(text: str | bytes, max_depth: int = MAX_DEPTH) -> bool:
    """Whether valid JSON text nests arrays and objects deeper than max_depth: strings
    removed, then innermost `[]`/`{}` pairs max_depth times (all in C). A text with at
    most max_depth brackets opening is not read further: counted, or past FIND_FROM
    characters found with `find` (a stored session's 6 KB lines: a fifth of the time)."""
    string: Any
    pair: Any
    other: Any
    if isinstance(text, bytes):
        marks: Any = (b"[", b"{")
        string, pair, other = _STRING_BYTES, _PAIR_BYTES, _NOT_BRACKET_BYTES
    else:
        marks = ("[", "{")
        string, pair, other = _STRING, _PAIR, _NOT_BRACKET
    if len(text) <= FIND_FROM:
        if text.count(marks[0]) + text.count(marks[1]) <= max_depth:
            return False
    elif _at_most(text, marks, max_depth):
        return False
    brackets: Any = other.sub(type(text)(), string.sub(type(text)(), text))
    for _ in range(max_depth):
        brackets, removed = pair.subn(type(text)(), brackets)
        if not brackets or not removed:
            return bool(brackets)
    return bool(brackets)


def _at_most(text: Any, marks: Any, limit: int) -> bool:
    """Whether `text` holds at most `limit` of the `marks` together: `count`, but each
    `find` jumps to the next one (memchr), so a long text with few is not read per
    character, and one with many stops at the limit's."""
    found = 0
    for mark in marks:
        at = text.find(mark)
        while at >= 0:
            found += 1
            if found > limit:
                return False
            at = text.find(mark, at + 1)
    return True


def problem(value: Any, max_depth: int = MAX_DEPTH) -> str | None:
    """What in a parsed value is not plain JSON (a non-finite number, too deep), or None."""
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{item} is not a finite number"
        if isinstance(item, dict | list | tuple):
            if depth > max_depth:
                return f"nested deeper than {max_depth} levels"
            children = item.values() if isinstance(item, dict) else item
            todo.extend((child, depth + 1) for child in children)
    return None


def cleaned(value: Any, max_depth: int = MAX_DEPTH) -> Any:
    """A copy of value that `dumps` can write: non-finite floats become None, a part
    nested past max_depth becomes a string saying so."""

    def clean(item: Any, depth: int) -> Any:
        if isinstance(item, float):
            return item if math.isfinite(item) else None
        if isinstance(item, dict | list | tuple):
            if depth > max_depth:
                return f"[{TOO_DEEP}]"
            if isinstance(item, dict):
                return {key: clean(child, depth + 1) for key, child in item.items()}
            return [clean(child, depth + 1) for child in item]
        return item

    return clean(value, 1)


def dumps(value: Any, **options: Any) -> str:
    """json.dumps with allow_nan=False; what it cannot write is `cleaned` first."""
    options["allow_nan"] = False
    try:
        return json.dumps(value, **options)
    except (ValueError, RecursionError):
        return json.dumps(cleaned(value), **options)
