"""One Store per process: the launcher builds it and every face uses that one, for new,
listed, loaded and deleted sessions alike."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon import cli
from elelem_daemon.faces.acp.connection import Connection
from elelem_daemon.faces.acp.server import AcpServer
from elelem_daemon.faces.daemon.daemon import Daemon
from elelem_daemon.store import store as stores


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every Store built from now on."""
    made: list[Any] = []
    original = stores.Store.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(stores.Store, "__init__", counting)
    return made


class Peer:
    def notify(self, method: str, params: dict[str, Any]) -> None:
        pass

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return None

    def stop(self, code: int) -> None:
        pass


async def test_the_daemon_face_uses_the_store_it_is_given(built, tmp_path: Path) -> None:
    store = stores.Store(tmp_path / "sessions")
    daemon = Daemon(Peer(), "stub", store=store)
    session = (await daemon.request("session/new", {"cwd": str(tmp_path)}))["sessionId"]
    await daemon.request("session/turn", {"sessionId": session, "text": "!echo hi"})
    listed = (await daemon.request("session/list", {}))["sessions"]
    assert [s["sessionId"] for s in listed] == [session] * 2
    await daemon.request("session/close", {"sessionId": session})
    await daemon.request("session/load", {"sessionId": session})
    await daemon.request("session/delete", {"sessionId": session})
    assert built == [store] and list(store.root.iterdir()) == []


async def test_the_acp_face_uses_the_store_it_is_given(built, tmp_path: Path) -> None:
    store = stores.Store(tmp_path / "sessions")
    server = AcpServer(Connection(lambda data: None), "stub", store=store)
    await server.initialize({"protocolVersion": 1})
    opened = await server.new_session({"cwd": str(tmp_path), "mcpServers": []})
    session = opened["sessionId"]
    prompt = [{"type": "text", "text": "!echo hi"}]
    await server.prompt({"sessionId": session, "prompt": prompt})
    assert [s["sessionId"] for s in (await server.list_sessions({}))["sessions"]] == [session]
    await server.close()
    await server.load_session({"sessionId": session, "cwd": str(tmp_path), "mcpServers": []})
    await server.close()
    await asyncio.sleep(0)  # the advertised commands go out after the answers
    assert built == [store] and len(list(store.root.iterdir())) == 1


@pytest.fixture
def logging_kept() -> Iterator[None]:
    """cli.main sets up logging to this test's captured stderr, which closes after it: a
    later test's log line would fail on it and print its record raw (tests/providers/
    test_secrets.py saw its key so). Put back as it was."""
    root, ours = logging.getLogger(), logging.getLogger("elelem_daemon")
    kept = (root.handlers[:], root.level, ours.handlers[:], ours.level, ours.propagate)
    last_resort = logging.lastResort
    yield
    root.handlers[:], ours.handlers[:] = kept[0], kept[2]
    root.setLevel(kept[1])
    ours.setLevel(kept[3])
    ours.propagate = kept[4]
    logging.lastResort = last_resort


def test_the_launcher_builds_one(
    built, capsys: pytest.CaptureFixture[str], logging_kept: None
) -> None:
    assert cli.main(["sessions", "--here"]) == 0
    assert len(built) == 1 and "no stored sessions" in capsys.readouterr().out
