"""owned.read_owned: the bytes of one of elelem's own files and the fstat of the fd they
came from (what `Store.load` marks a session read with), bounded on demand; never
through a link, never of a FIFO or a device."""

from __future__ import annotations

import os

import pytest

from elelem_daemon.base import jsonsafe
from elelem_daemon.base.errors import UnknownSession
from elelem_daemon.safety import owned
from elelem_daemon.store import records
from elelem_daemon.store.store import Store, fingerprint


def test_read_owned_gives_the_bytes_and_the_stat_of_that_file(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    data, info = owned.read_owned(path)
    assert data == b"0123456789" and fingerprint(info) == fingerprint(os.stat(path))
    assert owned.read_owned(path, 4)[0] == b"0123"
    assert owned.read_owned(path, 100)[0] == b"0123456789"
    assert owned.read_owned(path, 0)[0] == b""
    assert owned.read_bytes(path) == b"0123456789"
    (tmp_path / "empty").write_bytes(b"")
    assert owned.read_owned(tmp_path / "empty", 10)[0] == b""


def test_read_owned_refuses_what_is_not_a_plain_file_of_its_own(tmp_path):
    target = tmp_path / "target"
    target.write_bytes(b"precious")
    (tmp_path / "link").symlink_to(target)
    os.link(target, tmp_path / "hard")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name, says in [("link", "symlink"), ("hard", "hard links"), ("fifo", "not a regular")]:
        for limit in (None, 10):
            with pytest.raises(owned.NotOwned, match=says):
                owned.read_owned(tmp_path / name, limit)
    with pytest.raises(OSError):
        owned.read_owned(tmp_path / "dir")
    with pytest.raises(FileNotFoundError):
        owned.read_owned(tmp_path / "absent")


def test_a_load_is_marked_with_the_fingerprint_of_the_file_it_read(tmp_path):
    store = Store(tmp_path)
    head = {"type": "session", "id": "s", "cwd": "/p", "title": "t"}
    said = {"type": "message", "role": "user", "content": "hi", "at": "t"}
    path = tmp_path / "s.jsonl"
    path.write_bytes(records.encode(head) + records.encode(said))
    stored = store.load("s")
    assert stored.read_as == fingerprint(os.stat(path))
    assert [m["content"] for m in stored.messages] == ["hi"] and stored.title == "t"
    os.utime(path, (1, 1))  # another process appended: a fingerprint says so
    assert store.load("s").read_as != stored.read_as
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnknownSession, match="symlink"):
        store.load("s")


def _split_lines(data: bytes, path) -> tuple[list, list[str]]:
    """What `parse_lines` gave when it split the whole file first: its records, and the
    line numbers it warned of."""
    lines = data.split(b"\n")
    found, warned = [], []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = jsonsafe.loads(raw)
            if not isinstance(record, dict):
                raise ValueError("not an object")
        except ValueError:
            if number < len(lines):
                warned.append(f"line {number} skipped")
            continue
        found.append(record)
    return found, warned


FILES = [
    b"",
    b"\n",
    b"\n\n\n",
    b'{"a":1}',  # no newline at the end: the last line, whole
    b'{"a":1}\n',
    b'{"a":1}\n\n  \n\t\r\n{"b":2}\r\n{"c":',  # blank lines, CRLF, a torn tail
    b'{"a":1}\n[1]\n"s"\nnope\n{"b":\n\xff\xfe{}\n{"c":3}\n',  # not objects, corrupt, bad UTF-8
    b'\x0b{"a":1}\n\x0c\n{"a":"\xc3\xa9"}\n'
    + b"[" * 200
    + b'\n{"d":'
    + b"[" * 100
    + b"]" * 100
    + b"}\n",  # odd spaces; deep
    b'{"a":"' + b"x" * 70_000 + b'"}\n{"b":2}',
]


@pytest.mark.parametrize("data", FILES)
def test_lines_are_read_as_a_split_of_the_whole_file_read_them(tmp_path, caplog, data):
    """Each line is cut out as it is read, not the whole file split first: the same
    records, the same lines warned of (a complete one), a torn last line still silent."""
    path = tmp_path / "s.jsonl"
    expected, warned = _split_lines(data, path)
    caplog.set_level("WARNING", logger="elelem_daemon.store.records")
    assert records.parse_lines(data, path) == expected
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == len(warned)
    assert all(w in s for w, s in zip(warned, said, strict=True))
