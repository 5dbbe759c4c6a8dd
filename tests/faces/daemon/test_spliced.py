"""A large answer (`Large`: `session/load`'s) through the daemon's real protocol and
writer: its frame is the plain encoder's byte for byte, in the place the answer had
when the handler returned (a notification written after it stays after it), the event
loop runs while it is encoded, and what the splice cannot write takes the plain path.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import attrs
import pytest
from support.loop import ticking

from elelem_daemon.base.jsonsafe import MAX_DEPTH, TOO_DEEP
from elelem_daemon.faces.daemon import spliced, stdio
from elelem_daemon.faces.daemon.protocol import ElelemProtocol, converter_factory
from elelem_daemon.faces.daemon.spliced import Large
from elelem_daemon.faces.daemon.stdio import Stdout

APART = ("messages", "history")


@attrs.define
class Thing:  # what pygls's `_serialize_message` unstructures (the encoder's default)
    name: str
    size: int


def protocol_on(path: Path) -> tuple[ElelemProtocol, Stdout, Any]:
    from elelem_daemon.faces.daemon.protocol import JsonRPCServer

    stream = path.open("wb")
    writer = Stdout(stream, lambda: None)
    server = JsonRPCServer(ElelemProtocol, converter_factory)
    protocol: ElelemProtocol = server.protocol  # type: ignore[assignment]
    protocol.set_writer(writer)
    return protocol, writer, stream


def frames(data: bytes) -> list[bytes]:
    """The bodies of the frames in data, checking each header's length."""
    bodies, at = [], 0
    while at < len(data):
        end = data.index(b"\r\n\r\n", at)
        head = data[at:end].decode("ascii")
        assert head.startswith("Content-Length: "), head
        size = int(head.removeprefix("Content-Length: "))
        bodies.append(data[end + 4 : end + 4 + size])
        assert len(bodies[-1]) == size
        at = end + 4 + size
    return bodies


async def written(tmp_path: Path, name: str, send: Any) -> bytes:
    """What the protocol writes for `send(protocol)`, every place filled."""
    path = tmp_path / name
    protocol, writer, stream = protocol_on(path)
    send(protocol)
    await writer.filled(60)
    writer.flush()
    stream.close()
    return path.read_bytes()


async def both(tmp_path: Path, result: dict[str, Any], msg_id: Any = 7) -> tuple[bytes, bytes]:
    """The frame of `result` sent plain, and sent as a Large."""
    plain = await written(tmp_path, "plain", lambda p: p._send_response(msg_id, result=result))
    large = await written(
        tmp_path, "large", lambda p: p._send_response(msg_id, result=Large(result, APART))
    )
    return plain, large


def session_answer(contents: list[Any]) -> dict[str, Any]:
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": c}
        for n, c in enumerate(contents)
    ]
    history: list[Any] = []
    for n, m in enumerate(messages):
        history.append({"type": "message", **m})
        history.append(
            {
                "type": "tool",
                "id": f"call-{n}",
                "name": "read",
                "arguments": {"path": "a.py", "nested": [1, {"x": [None, True, 1.5]}]},
                "ok": True,
                "result": {"content": "y" * 3000 + str(n)},
            }
        )
    return {
        "sessionId": "s1",
        "cwd": "/home/me/projet é",
        "busy": False,
        "turns": 3,
        "tools": [{"name": "read", "description": "Read file"}],
        "title": "titre — ünïcödé 🐍",
        "messages": messages,
        "history": history,
        "plan": {"entries": [{"content": "faire", "status": "pending"}]},
    }


TEXTS = [
    "short",
    "",
    "é" * 2000,  # non-ASCII, long: escaped as \\u00e9
    "🐍 snake " * 300,  # astral: a surrogate pair each
    'quotes " and \\ backslashes ' * 100,
    "\x00\x01\x1f\x7f control \n\r\t\b\f " * 100,
    "\ud800 a lone surrogate " * 100,
    "x" * spliced.LONG,  # just long enough to be kept apart
    "x" * (spliced.LONG - 1),
    " ~" * spliced.LONG,  # the edges of what is written as it is
    *("x" * spliced.LONG + c for c in '"\\\x00\x1f\x7f\x80\n\u2028'),  # one byte to escape
    *(c + "y" * spliced.LONG for c in '"\\\x00\x1f\x7f\x80\n\u2028'),
]


async def test_a_large_answer_is_the_plain_encoders_bytes(tmp_path):
    result = session_answer([*TEXTS, *TEXTS])  # each long text twice, and again in history
    result["extra"] = {
        1: "an int key",
        2.5: "a float key",
        False: "a bool key",
        None: "a None key",
    }
    result["tuple"] = ("a", ["b", ("c",)], {"d": ()})
    result["thing"] = Thing("t", 3)  # through the encoder's default (pygls' serializer)
    result["messages"].append({"role": "user", "content": [Thing("part", 1), {"k": "v" * 5000}]})
    result["history"].append({"type": "odd", 3: "a non-str key in a walked dict"})
    plain, large = await both(tmp_path, result)
    assert large == plain
    assert json.loads(frames(large)[0])["result"]["extra"]["1"] == "an int key"
    assert large.isascii()


def test_a_long_text_is_written_as_the_escaper_writes_it_whatever_its_characters():
    from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]

    for code in [*range(0x300), 0x2028, 0xD800, 0xFFFF, 0x1F40D]:
        for text in ("x" * spliced.LONG + chr(code), chr(code) * spliced.LONG):
            expected = encode_basestring_ascii(text).encode("ascii")
            assert b"".join(spliced._long(text)) == expected, hex(code)


async def test_a_huge_message_and_an_empty_session(tmp_path):
    huge = session_answer(["z" * 4_000_000, 'a "huge" one\n' * 200_000])
    plain, large = await both(tmp_path, huge, msg_id="elelem-1")
    assert large == plain
    assert len(large) > 10_000_000
    plain, large = await both(tmp_path, session_answer([]))
    assert large == plain
    assert json.loads(frames(large)[0])["result"]["messages"] == []


async def test_what_the_splice_cannot_write_is_written_as_the_plain_path_does(tmp_path):
    nan = session_answer(["x" * 5000, "y"])
    nan["messages"][1]["score"] = math.nan  # in a list encoded in the thread
    nan["history"][0]["inf"] = [math.inf, -math.inf]
    plain, large = await both(tmp_path, nan)
    assert large == plain
    body = json.loads(frames(large)[0])
    assert body["result"]["messages"][1]["score"] is None
    assert body["result"]["history"][0]["inf"] == [None, None]

    small_nan = session_answer(["x" * 5000])
    small_nan["plan"] = {"weight": math.nan}  # in a value encoded on the loop
    plain, large = await both(tmp_path, small_nan)
    assert large == plain and b'"weight":null' in large

    deep: Any = "bottom"
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    too_deep = session_answer(["x" * 5000])
    too_deep["history"][1]["arguments"] = {"deep": deep, "nan": math.nan}
    plain, large = await both(tmp_path, too_deep)
    assert large == plain and TOO_DEEP.encode() in large


class Broken:
    """Not JSON, and the default serializer cannot make it so."""

    __slots__ = ()


async def test_a_bug_while_encoding_is_an_internal_error_and_the_output_goes_on(tmp_path):
    result = session_answer(["x" * 5000])
    result["messages"].append({"role": "user", "content": Broken()})

    def send(protocol: ElelemProtocol) -> None:
        protocol._send_response(3, result=Large(result, APART))
        protocol.notify("event/after", {"n": 1})

    data = await written(tmp_path, "broken", send)
    answer, after = (json.loads(b) for b in frames(data))
    assert answer["id"] == 3 and answer["error"]["data"]["kind"] == "internal_error"
    assert after["method"] == "event/after"


async def test_frames_written_after_a_large_answer_stay_after_it(tmp_path):
    path = tmp_path / "out"
    protocol, writer, stream = protocol_on(path)
    result = Large(session_answer(["w" * 6000] * 2000), APART)  # 24 MB in the answer
    protocol.notify("event/before", {})
    protocol._send_response(1, result=result)
    assert writer._places == 1, "encoded in a thread, not on the loop"
    protocol.notify("event/after", {})
    protocol._send_response(2, result={"small": True})
    async with ticking() as ticks:
        await writer.filled(60)  # the loop runs while the answer is encoded
    assert not writer._places
    writer.flush()
    stream.close()
    got = [json.loads(b) for b in frames(path.read_bytes())]
    assert [m.get("method", m.get("id")) for m in got] == ["event/before", 1, "event/after", 2]
    assert got[1]["result"]["messages"][-1]["content"] == "w" * 6000
    assert ticks.count > 1


async def test_the_end_waits_for_a_large_answer_still_encoding(tmp_path):
    path = tmp_path / "out"
    protocol, writer, stream = protocol_on(path)
    protocol._send_response(1, result=Large(session_answer(["v" * 6000] * 1000), APART))
    writer.flush()  # what the end flushes before: nothing may overtake the answer
    await writer.filled(60)
    writer.flush()
    stream.close()
    (body,) = frames(path.read_bytes())
    assert json.loads(body)["id"] == 1


def test_writev_writes_every_piece_in_order_when_the_system_writes_part(monkeypatch):
    read, write = os.pipe()
    real = os.writev
    calls = []

    def some(fd: int, buffers: list[Any]) -> int:  # at most 7 bytes a call
        calls.append(len(buffers))
        return real(fd, [bytes(b"".join(bytes(b) for b in buffers)[:7])])

    monkeypatch.setattr(stdio.os, "writev", some)
    pieces = [b"abc", b"", b"defghijklmnop", b"q" * 20, b"", b"rs"]
    try:
        stdio.writev(write, pieces)
        os.close(write)
        assert os.read(read, 1000) == b"".join(pieces)
    finally:
        os.close(read)
    assert len(calls) == math.ceil(len(b"".join(pieces)) / 7)


def test_many_pieces_to_a_stream_without_a_file_are_joined():
    import io

    stream = io.BytesIO()
    writer = Stdout(stream, lambda: pytest.fail("lost"))
    pieces = [b"%d," % n for n in range(stdio.PIECES * 3)]
    writer._emit(pieces)
    assert stream.getvalue() == b"".join(pieces) and not writer.broken


def test_the_pipe_to_the_client_is_widened_where_the_system_allows():
    read, write = os.pipe()
    try:
        size = stdio.widen(write)
        if size is not None:  # Linux: F_SETPIPE_SZ
            assert size >= min(stdio.PIPE_SIZE, int(Path("/proc/sys/fs/pipe-max-size").read_text()))
            os.write(write, b"x" * 100)
            assert os.read(read, 1000) == b"x" * 100
    finally:
        os.close(read)
        os.close(write)


def test_what_is_not_a_pipe_is_left_as_it_is(tmp_path):
    with (tmp_path / "file").open("wb") as file:
        assert stdio.widen(file.fileno()) is None
    assert stdio.widen(987654) is None  # not open
