"""owned.read_owned: the bytes of one of elelem's own files and the fstat of the fd they
came from (what `Store.load` marks a session read with), bounded on demand; never
through a link, never of a FIFO or a device."""

from __future__ import annotations

import os

import pytest

from elelem_daemon import owned
from elelem_daemon.errors import UnknownSession
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
