"""providers/lines.py: lines split as SSE defines them, across chunks; each line and
the whole answer bounded; an error body read only so far."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from elelem_daemon.base.errors import ProviderError
from elelem_daemon.providers.lines import batches, head, lines


class Answer:
    """An answer in no content encoding: its raw bytes are its bytes."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks
        self.read = 0
        self.headers: dict[str, str] = {}

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.read += 1
            yield chunk

    aiter_raw = aiter_bytes


async def collect(*chunks: bytes, **caps: int) -> list[str]:
    return [line async for line in lines(Answer(*chunks), "test", **caps)]  # type: ignore[arg-type]


async def test_every_line_end_and_chunk_boundary() -> None:
    assert await collect(b"a\nb\r\nc\rd") == ["a", "b", "c", "d"]
    assert await collect(b"a\r", b"\nb\r", b"c\n\n") == ["a", "b", "c", ""]
    assert await collect(b"da", b"ta: x", b"\n", b"\n") == ["data: x", ""]
    assert await collect(b"\xff\n") == ["\ufffd"]
    assert await collect(b"end\r") == ["end"]


async def test_a_line_past_the_cap() -> None:
    assert await collect(b"x" * 10 + b"\n", max_line=10) == ["x" * 10]
    with pytest.raises(ProviderError, match=r"test: a line of the stream passed 10 bytes"):
        await collect(b"x" * 6, b"x" * 6, max_line=10)


async def test_an_answer_past_the_cap() -> None:
    with pytest.raises(ProviderError, match=r"the answer passed 20 bytes \(ELELEM_MAX_REPLY\)"):
        await collect(*[b"0123456789\n"] * 3, max_reply=20)


async def test_an_error_body_is_read_only_so_far() -> None:
    answer = Answer(*[b"x" * 1000] * 1000)
    assert await head(answer, 2500) == b"x" * 2500  # type: ignore[arg-type]
    assert answer.read == 3


async def test_only_cr_lf_and_crlf_end_a_line() -> None:
    # str.splitlines would also split at these; SSE ends lines at \r\n, \r and \n alone
    text = "a\x0bb\x0cc\x1cd\x85e\u2028f"
    assert await collect(text.encode() + b"\n") == [text]
    assert await collect(b"a\r\rb\r", b"c\r", b"\n\r") == ["a", "", "b", "c", ""]
    assert await collect(b"\r", b"\n", b"x\r", b"y") == ["", "x", "y"]


async def test_a_read_s_lines_come_as_one_batch() -> None:
    answer = Answer(b"data: 1\n\ndata: 2\n", b"\ndata: 3", b"\r", b"\n\n")
    got = [batch async for batch in batches(answer, "test")]  # type: ignore[arg-type]
    assert got == [["data: 1", "", "data: 2"], [""], ["data: 3", ""]]  # "\r" alone: a wait


async def test_a_stream_in_one_byte_reads() -> None:
    # each read is looked at once (linear in the answer), whatever the line ends
    data = b"data: a\r\n\r\ndata: b\rdata: c\n\n\r\r\nx" + b"y" * 5000 + b"\r"
    expected = await collect(data)
    assert expected == ["data: a", "", "data: b", "data: c", "", "", "", "x" + "y" * 5000]
    assert await collect(*(data[i : i + 1] for i in range(len(data)))) == expected
    assert await collect(*(data[i : i + 3] for i in range(0, len(data), 3))) == expected


async def test_a_read_of_whole_lines_decodes_as_line_by_line() -> None:
    # such a read is decoded whole, then split (Splitter's usual case): bad and cut UTF-8
    # sequences before a line end give what decoding each line alone gives
    data = b"\xe2\x82\ndata: \xff\xfe x\n\xf0\x9f\x99\n\xc3\n\xed\xa0\x80\nok \xc3\xa9\n\n"
    one_by_one = await collect(*(data[i : i + 1] for i in range(len(data))))
    assert one_by_one == [line.decode("utf-8", "replace") for line in data.split(b"\n")[:-1]]
    assert await collect(data) == one_by_one
    assert await collect(data[:9], data[9:]) == one_by_one


async def test_sse_events_in_one_step_are_sse_events_of_batches() -> None:
    from elelem_daemon.providers.lines import Splitter
    from elelem_daemon.providers.sse import read_events, sse_events

    data = (
        b": comment\n\nevent: delta\ndata: a\ndata:b\r\n\r\nid: 1\ndata: c\n\ndata: [DONE]\n\n"
        b"retry: 5\ndata: open at the end\r"
    )
    for size in (1, 2, 7, len(data)):
        reads = [data[i : i + size] for i in range(0, len(data), size)]
        step = [e async for b in read_events(Answer(*reads).aiter_raw(), Splitter("t")) for e in b]
        plain = [e async for b in sse_events(batches(Answer(*reads), "t")) for e in b]  # type: ignore[arg-type]
        assert (
            step
            == plain
            == [
                ("delta", "a\nb"),
                ("message", "c"),
                ("message", "[DONE]"),
                ("message", "open at the end"),
            ]
        )
