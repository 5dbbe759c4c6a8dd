"""The daemon's writer (stdio.py): writev writes every piece in order, many pieces to a
stream without a file are joined, and the pipe to the client is widened where the
system allows."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.faces.daemon import stdio
from elelem_daemon.faces.daemon.stdio import Stdout


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
