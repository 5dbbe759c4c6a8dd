"""Listing stored sessions reads each file's first bytes only (issue 22): what it reads
is bounded however large or hostile a file is, every file that cannot be listed is
skipped with a warning, and the entries are those a full load gives, in one order."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.store import records
from elelem_daemon.store.store import HEAD_LINE, HEAD_READ, HEAD_SCAN, Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "sessions")
    store.root.mkdir()
    return store


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every `os.read` the listing makes."""
    sizes: list[int] = []
    real = os.read

    def counted(fd: int, n: int) -> bytes:
        data = real(fd, n)
        sizes.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counted)
    return sizes


def head(session_id: str, title: str = "", cwd: str = "/project", **more: Any) -> dict:
    return {
        "type": "session",
        "version": records.VERSION,
        "id": session_id,
        "cwd": cwd,
        "provider": "stub",
        "model": "m",
        "created": "2026-12-01T00:00:00.000Z",
        "title": title,
        **more,
    }


def said(role: str, content: str, **more: Any) -> dict:
    return {"type": "message", "role": role, "content": content, "at": "t", **more}


def write(store: Store, session_id: str, *lines: dict, mtime: int | None = None) -> Path:
    path = store.root / f"{session_id}.jsonl"
    path.write_bytes(b"".join(records.encode(line) for line in lines))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_a_titled_session_is_listed_from_its_first_read_however_large(store, read):
    write(store, "big", head("big", "the title"), *[said("user", "x" * 10_000)] * 500)
    assert (store.root / "big.jsonl").stat().st_size > 5_000_000
    [listed] = store.list()
    assert (listed.id, listed.title, listed.cwd, listed.model) == (
        "big",
        "the title",
        "/project",
        "m",
    )
    assert read == [HEAD_READ] and listed.messages == []  # one read, of its first bytes


def test_an_untitled_session_takes_its_title_from_the_first_prompt(store, read):
    summary = said("user", "s" * (2 * HEAD_READ), prompt=False)  # no prompt: /compact's summary
    write(store, "near", head("near"), said("user", "  \nnear prompt\nmore"), summary)
    write(store, "far", head("far"), summary, said("assistant", "ok"), said("user", "far prompt"))
    beyond = said("assistant", "a" * HEAD_SCAN)
    write(store, "beyond", head("beyond"), beyond, said("user", "too far to be read"))
    write(store, "none", head("none"), said("assistant", "no prompt at all"))
    titles = {s.id: s.title for s in store.list()}
    assert titles == {"near": "near prompt", "far": "far prompt", "beyond": "", "none": ""}
    assert read and max(read) <= HEAD_LINE + HEAD_SCAN
    assert store.load("beyond").title == "too far to be read"  # a load reads it all


def test_a_huge_first_line_is_skipped_and_read_only_up_to_the_bound(store, read, caplog):
    write(store, "fine", head("fine", "fine"))
    (store.root / "endless.jsonl").write_bytes(b'{"type":"session","title":"' + b"x" * 5_000_000)
    long = records.encode(head("long", "t", model="m" * HEAD_LINE))
    (store.root / "long.jsonl").write_bytes(long)
    assert [s.id for s in store.list()] == ["fine"]
    assert caplog.text.count(f"metadata line longer than {HEAD_LINE} bytes") == 2
    assert len(read) == 5 and sum(read) <= HEAD_READ * 3 + 2 * (HEAD_LINE + HEAD_SCAN)


def test_headers_that_are_no_metadata_are_skipped_with_a_warning(store, caplog):
    write(store, "good", head("good", "good"))
    bad = {
        "latin1": '{"type":"session","title":"caf\xe9"}\n'.encode("latin-1"),
        "notjson": b"session: yes\n",
        "torn": b'{"type":"session","ti',
        "empty": b"",
        "array": b"[1, 2]\n",
        "other": records.encode(said("user", "no header")),
        "deep": b"[" * 100_000 + b"\n",
        "nan": b'{"type":"session","title":NaN}\n',
    }
    for name, data in bad.items():
        (store.root / f"{name}.jsonl").write_bytes(data)
    assert [s.id for s in store.list()] == ["good"]
    for name in bad:
        assert f"{name}.jsonl skipped" in caplog.text


def test_links_fifos_and_folders_in_the_store_are_skipped(store, tmp_path, read, caplog):
    write(store, "mine", head("mine", "mine"))
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(records.encode(head("elsewhere", "not mine")))
    (store.root / "symlink.jsonl").symlink_to(elsewhere)
    (store.root / "dangling.jsonl").symlink_to(tmp_path / "nothing")
    os.link(elsewhere, store.root / "hardlink.jsonl")
    os.mkfifo(store.root / "fifo.jsonl")  # a read of it would block: never read
    (store.root / "folder.jsonl").mkdir()
    (store.root / "other.txt").write_bytes(records.encode(head("other", "not a session")))
    assert [s.id for s in store.list()] == ["mine"]
    for name in ("symlink", "dangling", "hardlink", "fifo", "folder"):
        assert f"{name}.jsonl skipped" in caplog.text
    assert len(read) == 1  # the one file of elelem's own


def test_no_folder_or_a_file_in_its_place_lists_nothing(tmp_path):
    assert Store(tmp_path / "absent").list() == []
    (tmp_path / "file").write_text("x")
    assert Store(tmp_path / "file").list() == []


def test_the_listing_is_what_loading_each_file_gives_in_the_one_order(store):
    """The entries are the loaded sessions' metadata (a listing reads less, the same
    way), most recently updated first, then most recently created."""
    for n, (title, cwd) in enumerate([("a", "/p"), ("", "/q"), ("c", "/p"), ("", "/p")]):
        first = said("user", f"prompt {n}") if not title else said("assistant", "hi")
        lines = [head(f"s{n}", title, cwd, created=f"2026-12-0{n + 1}T00:00:00.000Z"), first]
        write(store, f"s{n}", *lines, mtime=1_000_000 + (n // 2))  # two share a time
    write(store, "meta", head("meta", "m", "/p"), {"type": "meta", "provider": "p", "at": "t"})
    os.utime(store.root / "meta.jsonl", (999_999, 999_999))

    def shown(stored: records.Stored) -> tuple:
        return (stored.id, stored.cwd, stored.provider, stored.model, stored.title)

    listed = store.list()
    assert [s.id for s in listed] == ["s3", "s2", "s1", "s0", "meta"]
    loaded = [store.load(s.id) for s in listed]
    assert [shown(s) for s in listed][:-1] == [shown(s) for s in loaded][:-1]
    assert [(s.created, s.updated) for s in listed] == [(s.created, s.updated) for s in loaded]
    assert shown(listed[-1])[2] == "stub" and shown(loaded[-1])[2] == "p"  # the header's
    assert [s.id for s in store.list("/p")] == ["s3", "s2", "s0", "meta"]
    assert [s.summary()["title"] for s in listed] == ["prompt 3", "c", "prompt 1", "a", "m"]


async def test_the_stored_files_are_read_in_a_worker_thread_not_on_the_loop(tmp_path):
    """A store of thousands of sessions never holds the event loop (store.listing)."""
    import threading

    from elelem_daemon.store.listing import listing

    store = Store(tmp_path)
    readers: list[int] = []
    real = store.list

    def list_(cwd=None):
        readers.append(threading.get_ident())
        return real(cwd)

    store.list = list_  # type: ignore[method-assign]
    opened: list[int] = []
    assert await listing(store, lambda: opened.append(1) or [], None) == []
    assert readers and readers[0] != threading.get_ident()
    assert opened == [1]  # the open sessions are asked for after the read
