"""Large answers: encoded in a worker thread, in pieces, each long string once.

A handler marks a result that may be large (`session/load`'s 60 MB of messages, sent
twice: as `messages` and as `history`) by returning it as a `Large` (a plain dict
otherwise). The protocol encodes its small values on the loop (`Raw`) and the rest in
a thread with `frame_chunks`, which gives the frame as a list of bytes: the header,
then the body in pieces. The body is byte for byte what the daemon's compact encoder
(`encoding.compact_encoder`) writes for the same message: same key order, compact,
ASCII. A value it cannot write (NaN, Infinity, too deep) raises, and the protocol
then writes the answer as before, cleaned (`jsonsafe.cleaned` on the whole message).
What changes is the cost: a string of `LONG` characters or more is escaped and made
bytes once however often it occurs (the same content in `messages` and `history`),
and one with nothing to escape (ASCII from space to `~`, no `"` or `\\`: a check in C,
`bytes.translate`, 5x faster than the escaper) is only made bytes and written between
quotes, which is what the escaper would write for it; nothing is joined into one
120 MB string, and the thread lets go of the interpreter between pieces, so the event
loop keeps answering.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

LONG = 1024  # characters: a string this long is escaped once and kept as its own piece
DEPTH = 4  # levels walked in Python; below that, one call of the C encoder per value
SMALL = 65536  # characters of small pieces joined before they become bytes
QUOTE = b'"'
# what `encode_basestring_ascii` writes as it is (json's S_CHAR): any other byte is escaped
AS_IS = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')


class Large(dict):  # type: ignore[type-arg]
    """A result that may be large; everything but the protocol sees a plain dict.

    The values under `apart` (the caller's own lists, which nobody changes once the
    result is made) are encoded in a thread; the others (the session's description,
    which may share live state) are encoded on the loop when the answer is sent."""

    def __init__(self, value: dict[str, Any], apart: tuple[str, ...]) -> None:
        super().__init__(value)
        self.apart = apart


class Raw:
    """A value already encoded (as `plain` writes it): spliced in as it is."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def frame_chunks(message: dict[str, Any], plain: Callable[[Any], str]) -> list[bytes]:
    """`Content-Length: N\r\n\r\n` and then the body of `message` in pieces, equal to
    `plain(message)` with each `Raw` as its text. Raises what `plain` raises (ValueError
    for NaN, RecursionError): the caller then takes the plain path, which cleans."""
    body = _pieces(message, plain)
    size = sum(len(piece) for piece in body)
    return [b"Content-Length: %d\r\n\r\n" % size, *body]


def _pieces(message: Any, plain: Callable[[Any], str]) -> list[bytes]:
    out: list[bytes] = []
    small: list[str] = []
    memo: dict[str, tuple[bytes, ...]] = {}  # by value: equal strings are escaped alike
    held = 0  # characters in `small`

    def emit(text: str) -> None:
        nonlocal held
        small.append(text)
        held += len(text)
        if held >= SMALL:
            settle()

    def settle() -> None:
        nonlocal held
        if small:
            out.append("".join(small).encode("ascii"))
            small.clear()
            held = 0

    def walk(value: Any, depth: int) -> None:
        if type(value) is Raw:
            emit(value.text)
        elif type(value) is str and len(value) >= LONG:
            done = memo.get(value)
            if done is None:
                done = memo[value] = _long(value)
            settle()
            out.extend(done)
        elif isinstance(value, str):
            emit(encode_basestring_ascii(value))
        elif depth and isinstance(value, dict) and all(type(key) is str for key in value):
            emit("{")
            for n, (key, item) in enumerate(value.items()):
                emit(("," if n else "") + encode_basestring_ascii(key) + ":")
                walk(item, depth - 1)
            emit("}")
        elif depth and isinstance(value, list | tuple):
            emit("[")
            for n, item in enumerate(value):
                if n:
                    emit(",")
                walk(item, depth - 1)
            emit("]")
        else:
            emit(plain(value))

    walk(message, DEPTH)
    settle()
    return out


def _long(text: str) -> tuple[bytes, ...]:
    """`encode_basestring_ascii(text)` as bytes, in pieces: a text with nothing to
    escape (every byte AS_IS) is its own bytes between quotes, not copied again."""
    if text.isascii():
        raw = text.encode("ascii")
        if not raw.translate(None, AS_IS):  # every byte deleted: none needs escaping
            return QUOTE, raw, QUOTE
    return (encode_basestring_ascii(text).encode("ascii"),)
