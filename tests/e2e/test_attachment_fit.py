"""An attachment never breaks the window (issue 40), through the real daemon on stdio
against a fake llama.cpp with a 2,048-token window (tests/support/small_window.py):
a 6,000-line file, mentioned or attached, is cut to its share with a note the model
reads and a line the user sees, before any compaction, and neither that turn nor the
later ones compact; a mention that attaches nothing says so."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.small_window import SmallWindow

from elelem_daemon.jsonrpc.client import Client

from .conftest import within

pytestmark = pytest.mark.e2e
NOTE = re.compile(r'note="cut: lines 1–(\d+) of 6,000; ask for more with read"')


@pytest.fixture
def small() -> Iterator[SmallWindow]:
    with SmallWindow(2048, reply_chars=200) as server:
        yield server


@pytest.fixture
def local(env: dict[str, str], small: SmallWindow, workdir: Path) -> dict[str, str]:
    lines = "".join(f"line {n} of the big file\n" for n in range(1, 6001))
    (workdir / "big.txt").write_text(lines)
    (workdir.parent / "outside.txt").write_text("not in the project\n")
    values = {k: v for k, v in env.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    return {**values, "OPENAI_BASE_URL": f"{small.url}/v1", "OPENAI_MODEL": "local"}


@pytest.mark.parametrize("how", ["mention", "attachment"])
async def test_a_6000_line_file_is_cut_to_fit_and_nothing_compacts(
    local, small, workdir, how
) -> None:
    says: list[dict[str, Any]] = []

    def heard(event: dict[str, Any]) -> None:
        if event["method"] == "event/say":
            says.append(event["params"])

    async with await Client.spawn("daemon", "-p", "openai", env=local, cwd=str(workdir)) as client:
        await within(client.initialize())
        session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
        if how == "mention":
            first = await within(client.turn(session, "explain @big.txt", on_event=heard), 60)
        else:
            attached = [{"type": "file", "path": str(workdir / "big.txt")}]
            first = await within(
                client.turn(session, "explain it", on_event=heard, attachments=attached), 60
            )
        assert first["stopReason"] == "end_turn", first
        for text in ["and then?", "what else?", "anything more?"]:
            later = await within(client.turn(session, text, on_event=heard), 60)
            assert later["stopReason"] == "end_turn", later
    (cut,) = [s for s in says if "was cut" in s["text"]]
    assert cut["kind"] == "info"
    shown = re.fullmatch(
        r"@big\.txt was cut to fit the model's window: lines 1–(\d+) of 6,000", cut["text"]
    )
    assert shown, cut
    sent = small.bodies[0]["messages"][-1]["content"]
    (kept,) = NOTE.findall(sent)
    assert kept == shown[1] and 10 <= int(kept) < 6000
    assert f"line {kept} of the big file\n" in sent and f"line {int(kept) + 1} of" not in sent
    assert not [s for s in says if "compact" in s["text"]]  # this turn and the later ones
    assert not [b for b in small.bodies if "Summarize" in str(b["messages"][-1]["content"])]
    assert all(status == 200 for _, status, _ in small.requests)
    assert all(tokens <= 0.85 * 2048 for tokens, _, _ in small.requests)


async def test_a_mention_that_attaches_nothing_says_so(local, small, workdir) -> None:
    says: list[dict[str, Any]] = []

    def heard(event: dict[str, Any]) -> None:
        if event["method"] == "event/say":
            says.append(event["params"])

    async with await Client.spawn("daemon", "-p", "openai", env=local, cwd=str(workdir)) as client:
        await within(client.initialize())
        session = (await within(client.new_session(cwd=str(workdir))))["sessionId"]
        text = "compare @../outside.txt with @missing.py, thanks @someone"
        done = await within(client.turn(session, text, on_event=heard), 60)
    assert done["stopReason"] == "end_turn"
    assert [(s["text"], s["kind"]) for s in says] == [
        ("@../outside.txt attaches nothing: it is outside the working directory", "info"),
        ("@missing.py attaches nothing: no such file or folder", "info"),
    ]  # `@someone` is no path: nothing is said of it
    assert "not in the project" not in str(small.bodies[0]["messages"])
