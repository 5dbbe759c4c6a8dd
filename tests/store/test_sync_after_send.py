"""The prompt's record is written before the request goes out and synced after it
(store.py: write, then send, then sync off the event loop)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start
from elelem_daemon.store.store import Store


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("ELELEM_STATE_DIR", raising=False)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path


class Recording:
    """A provider that notes, when it is handed the request, what the file holds."""

    model = "recording"

    def __init__(self, path: Path, events: list[str]) -> None:
        self.path, self.events = path, events

    async def fetch(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]):
        lines = [json.loads(line) for line in self.path.read_text().splitlines()]
        written = any(r.get("content") == "the prompt" for r in lines)
        self.events.append(f"send (prompt written: {written})")
        yield {"type": "saying", "text": "the reply"}


async def test_the_prompt_is_written_then_sent_then_synced_off_the_loop(monkeypatch):
    events: list[str] = []
    loop_thread = threading.get_ident()
    real = os.fsync

    def fsync(fd: int) -> None:
        where = "loop" if threading.get_ident() == loop_thread else "thread"
        events.append(f"fsync ({where})")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    store = Store()
    session = start(core_registry(entry_points=False), plugin_files=False, store=store)
    session.recorder.start()  # the file exists before the turn (as the ACP face makes it)
    await session.recorder.writer.synced()
    session.provider = Recording(store.path(session.id), events)
    events.clear()
    assert (await session.turn("the prompt")).reply == "the reply"
    await session.recorder.writer.synced()
    assert events[0] == "send (prompt written: True)"
    assert events[1:] and set(events[1:]) == {"fsync (thread)"}, events
    await session.close()


async def test_without_a_loop_each_append_is_synced_before_it_returns(monkeypatch):
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    writer = Store().writer("plain").open()
    before = len(synced)

    def append() -> int:
        writer.append({"type": "session", "id": "plain"})
        return len(synced)

    assert await asyncio.to_thread(append) == before + 1  # no running loop in that thread
    writer.close()


def test_a_write_as_the_loop_ends_is_still_synced(monkeypatch):
    """The terminal's last records come as asyncio.run shuts its executor down: synced
    in place, never an error (a `RuntimeError: Executor shutdown` once reached stderr)."""
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    writer = Store().writer("ending").open()

    async def main() -> None:
        await asyncio.get_running_loop().shutdown_default_executor()
        before = len(synced)
        writer.append({"type": "session", "id": "ending"})
        await asyncio.sleep(0)  # the sync's turn comes
        assert len(synced) == before + 1
        writer.append({"type": "message", "role": "user", "content": "late"})
        writer.close()  # pending: synced before it is gone
        assert len(synced) >= before + 2

    asyncio.run(main())
