"""FrameReader: Content-Length frames from any chunking, and recovery from bad input."""

from __future__ import annotations

import json

import pytest

from elelem_daemon.jsonrpc.framing import BadFrame, FrameReader, cut_short, encode


def reader(*chunks: bytes, max_body: int = 1 << 20) -> FrameReader:
    queue = list(chunks)

    async def read() -> bytes:
        return queue.pop(0) if queue else b""

    return FrameReader(read, max_body)


async def frames(source: FrameReader) -> list[object]:
    out: list[object] = []
    while (frame := await source.frame()) is not None:
        out.append(frame.message.split(":")[0] if isinstance(frame, BadFrame) else frame)
    return out


def test_encode_counts_bytes_and_escapes_non_ascii() -> None:
    data = encode({"text": "é"})
    assert data == b'Content-Length: 17\r\n\r\n{"text":"\\u00e9"}'


@pytest.mark.parametrize("size", [1, 2, 7, 64, 10_000])
async def test_any_chunking_gives_the_same_frames(size: int) -> None:
    data = encode({"a": 1}) + encode({"b": "x" * 500}) + encode({"c": [1, 2]})
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    got = await frames(reader(*chunks))
    assert [json.loads(f) for f in got] == [{"a": 1}, {"b": "x" * 500}, {"c": [1, 2]}]


async def test_other_headers_any_case_and_bare_newlines() -> None:
    data = b"Content-Type: x\r\ncontent-length: 2\r\n\r\n{}\n\nCONTENT-LENGTH: 2\n\n[]"
    assert await frames(reader(data)) == [b"{}", b"[]"]


async def test_a_bad_header_is_reported_once_and_its_body_skipped() -> None:
    data = b'Content-Length: x\r\n\r\n{"lost": 1}' + encode({"ok": 1})
    assert await frames(reader(data)) == ["bad header", b'{"ok":1}']


async def test_junk_between_frames_is_reported_once_per_run() -> None:
    data = b"junk one\njunk two\n" + encode({"ok": 1}) + b"more junk\n"
    assert await frames(reader(data)) == [
        "data outside a frame",
        b'{"ok":1}',
        "data outside a frame",
    ]


async def test_a_body_cut_by_the_end_of_input() -> None:
    assert await frames(reader(b"Content-Length: 10\r\n\r\n{}")) == [
        "end of input inside a body of 10 bytes"
    ]


async def test_a_header_cut_by_the_end_of_input() -> None:
    assert await frames(reader(b"Content-Length: 10\r\n")) == ["end of input inside a header"]


async def test_a_too_large_frame_is_refused_then_skipped() -> None:
    data = b"Content-Length: 5000\r\n\r\n" + b"x" * 5000 + encode({"ok": 1})
    got = await frames(reader(data[:100], data[100:], max_body=1000))
    assert got == ["message too large", b'{"ok":1}']


async def test_resync_gives_back_a_swallowed_frame() -> None:
    good = encode({"ok": 1})
    source = reader(b'Content-Length: 20\r\n\r\n{"a":' + good)
    body = await source.frame()
    assert isinstance(body, bytes) and body.startswith(b'{"a":Content-Length')
    assert source.resync(body)
    assert await source.frame() == b'{"ok":1}'


async def test_an_endless_line_does_not_grow_the_buffer() -> None:
    source = reader(*[b"z" * 65536] * 20, encode({"ok": 1}))
    got = await frames(source)
    assert got == ["data outside a frame", b'{"ok":1}']
    assert len(source._buffer) == 0


@pytest.mark.parametrize(
    ("body", "short"),
    [
        (b'{"jsonrpc":"2.0","id":1', True),  # the rest follows outside the frame
        (b'{"jsonrpc":"2.0","id', True),  # a string left open is reported at its start
        (b"[[[", True),
        (b"{bad}", False),  # wrong in itself: what follows is read as usual
        (b'{"a":1}}', False),
        (b"", False),
        (b"\xff\xfe", False),
    ],
)
def test_a_body_cut_short_is_told_from_a_bad_one(body: bytes, short: bool) -> None:
    assert cut_short(body) is short


async def test_after_a_bad_body_the_next_line_is_read_as_usual() -> None:
    source = reader(b"Content-Length: 5\r\n\r\n{bad}" + b'{"ndjson":1}\n' + encode({"ok": 1}))
    body = await source.frame()
    assert body == b"{bad}" and not source.resync(body)
    junk = await source.frame()
    assert isinstance(junk, BadFrame) and junk.message.startswith("data outside a frame")
    assert await source.frame() == b'{"ok":1}'
