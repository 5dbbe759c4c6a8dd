"""jsonsafe.loads against json.loads: the same values and the same errors (it calls
json's scanner directly, without `JSONDecoder.decode`'s frames: issue 22)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from elelem_daemon.base import jsonsafe
from elelem_daemon.base.jsonsafe import loads

TEXTS = [
    '{"a": [1, 2.5, "x", null, true, false]}',
    "  \t\r\n[1]\n ",
    '"\\ud800 lone"',
    "",
    "   ",
    "[1,]",
    '{"a": 1} x',
    '{"a": 1}{"b": 2}',
    '{"a" 1}',
    "nul",
    "[1, 2",
    '"open',
    "-",
    "1e5",
    "12345678901234567890123456789",
]


def refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@pytest.mark.parametrize("text", TEXTS)
def test_loads_answers_as_json_loads(text: str) -> None:
    try:
        expected: Any = json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        with pytest.raises(json.JSONDecodeError) as caught:
            loads(text)
        assert (caught.value.msg, caught.value.pos) == (exc.msg, exc.pos)
        assert str(caught.value) == str(exc)
    else:
        assert loads(text) == expected
        assert loads(text.encode()) == expected


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}'])
def test_loads_refuses_the_constants(text: str) -> None:
    with pytest.raises(ValueError, match="is not JSON"):
        loads(text)


def test_loads_refuses_an_infinite_number_when_finite() -> None:
    assert loads("1e999") == float("inf")
    with pytest.raises(ValueError, match="not a finite number"):
        loads("[1e999]", finite=True)
    assert loads("[1.5]", finite=True) == [1.5]


def test_loads_refuses_deep_nesting_and_a_bom() -> None:
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        loads("[" * 101 + "]" * 101)
    with pytest.raises(ValueError, match="nested deeper"):
        loads("[" * 100000)
    assert loads("[" * 100 + "]" * 100) is not None
    with pytest.raises(json.JSONDecodeError, match="BOM"):
        loads("\ufeff[]")
    with pytest.raises(TypeError):
        loads(5)  # type: ignore[arg-type]


def _nested(depth: int, pad: str, inner: str = "1") -> str:
    """`depth` levels of arrays and objects in turn, a long string beside the deepest."""
    text = f'["{pad}",{inner}]'
    for n in range(depth - 1):
        text = f'{{"k{n}":{text}}}' if n % 2 else f"[{text}]"
    return text


@pytest.mark.parametrize("pad", ["", "x" * (jsonsafe.FIND_FROM + 10), "[{" * 3000])
def test_the_depth_is_bounded_alike_in_short_and_long_texts(pad: str) -> None:
    """A long text's brackets are found, not counted: the same answers, at the bound, with
    brackets in strings (they count as openings, then go with the strings) or without."""
    for depth, deep in ((jsonsafe.MAX_DEPTH, False), (jsonsafe.MAX_DEPTH + 1, True)):
        text = _nested(depth, pad)
        assert jsonsafe.too_deep(text) is deep
        assert jsonsafe.too_deep(text.encode()) is deep
        if deep:
            with pytest.raises(ValueError, match="nested deeper than 100 levels"):
                loads(text)
        else:
            assert loads(text) == json.loads(text)
    flat = "[" + ",".join(["[]"] * 300) + f',"{pad}"]'  # 301 openings, 2 levels
    assert not jsonsafe.too_deep(flat) and loads(flat) == json.loads(flat)
    assert jsonsafe.too_deep("[" * 101 + f'"{pad}"' + "]" * 101)
    assert not jsonsafe.too_deep("[" * 100 + f'"{pad}"' + "]" * 100)


BYTES = [
    b"[1]",
    b"{}",
    b"1",
    b"12",
    b"123",
    b" 1",
    b'"\xc3\xa9"',
    b'"\xed\xa0\x80"',  # a lone surrogate, as UTF-8 (surrogatepass)
    b'"\xff"',
    b"\x00",
    b"\x001",
    b"1\x00",
    b"\x80[]",
    b"\xef\xbb\xbf[1]",
    *("[1, 2]".encode(codec) for codec in ("utf-16", "utf-16-le", "utf-16-be", "utf-32")),
    *("[1, 2]".encode(codec) for codec in ("utf-32-le", "utf-32-be", "utf-8-sig")),
    *('"é"'.encode(codec) for codec in ("utf-16-le", "utf-16-be")),
]


@pytest.mark.parametrize("data", BYTES)
def test_loads_reads_bytes_in_the_encoding_json_loads_finds(data: bytes) -> None:
    """A text of bytes is decoded as `json.loads` decodes it (`detect_encoding`): the
    plain UTF-8 case without calling it, the others (BOMs, UTF-16 and -32) through it."""
    try:
        expected: Any = json.loads(data)
    except ValueError as exc:
        with pytest.raises(type(exc)) as caught:
            loads(data)
        assert str(caught.value) == str(exc)
    else:
        assert loads(data) == expected
        assert loads(bytearray(data)) == expected
