"""The bounded `read` (elelem_daemon/edits/filesystem.py): offset and limit, the byte cap (never
a broken character), the notes, special files refused without blocking, and the same
excerpts from a replacement that only serves whole texts."""

from __future__ import annotations

import io
import os
from pathlib import Path

from elelem_daemon.edits.filesystem import cut


def excerpt(data: bytes, offset: int = 1, limit: int = 2000, cap: int = 100):
    return cut(io.BytesIO(data), offset, limit, cap)


def test_offset_and_limit() -> None:
    data = b"".join(b"%d\n" % n for n in range(1, 11))
    shown = excerpt(data, 3, 2)
    assert (shown.text, shown.first, shown.last) == ("3\n4\n", 3, 4)
    assert shown.note == "showing lines 3-4; the file goes on: read on with offset=5"
    assert excerpt(data, 9, 2).note is None  # lines 9-10: nothing after them
    assert excerpt(data, 11).note == "the file has 10 lines"
    assert excerpt(b"a\nb", 5).note == "the file has 2 lines"
    assert excerpt(b"a\nb").text == "a\nb"


def test_the_cap_cuts_whole_characters_and_says_where() -> None:
    shown = excerpt("ab\n".encode() + "é".encode() * 100, cap=10)
    assert shown.text == "ab\n" + "é" * 3  # 3 + 6 bytes: the 4th é would be cut in half
    assert shown.note == (
        "cut at 10 bytes, in line 2; read on with offset=3 (the rest of line 2 is skipped)"
    )


def test_an_offset_far_into_a_big_file(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x\n" * 300_000)  # past several read blocks
    with open(path, "rb") as f:
        shown = cut(f, 299_999, 10, 100)
    assert (shown.text, shown.first, shown.last, shown.note) == ("x\nx\n", 299_999, 300_000, None)


async def test_special_files_are_refused_without_blocking(session, workdir) -> None:
    os.mkfifo(workdir / "fifo")
    read = (await session.toolbox.run("read", {"path": "fifo"})).to_dict()
    assert read["ok"] is False and read["error"].endswith("fifo is not a regular file")
    write = (await session.toolbox.run("write", {"path": "fifo", "content": "x"})).to_dict()
    assert write["ok"] is False and write["error"].endswith("fifo is not a regular file")
    grep = (await session.toolbox.run("grep", {"pattern": "project"})).to_dict()
    assert grep["content"] == "README.md:1:# My project"  # the FIFO was skipped, not waited on


async def test_a_replacement_serving_whole_texts_is_cut_too(session, workdir) -> None:
    class Editor:
        async def read_text(self, path: Path, errors: str = "strict") -> str:
            return "".join(f"buffer {n}\n" for n in range(1, 3001))

    session.files = Editor()
    read = (await session.toolbox.run("read", {"path": "x.py", "offset": 2999})).to_dict()
    assert read == {"content": "buffer 2999\nbuffer 3000\n", "path": "x.py", "ok": True}
    read = (await session.toolbox.run("read", {"path": "x.py"})).to_dict()
    assert read["note"] == "showing lines 1-2000; the file goes on: read on with offset=2001"
