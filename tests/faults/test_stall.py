"""One tool call cannot stall the daemon (issue 13, item 5). `grep` and `glob` run in
a child process (elelem_daemon/builtins/scan.py), so a regular expression that
backtracks for ever, or a search over a huge tree, leaves every other session (and
`session/cancel`) answered within 1 s; each file gets a bounded time of matching,
the whole search a bounded time, and both end with a note saying so."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import Client

from .conftest import all_gone, anywhere, within

pytestmark = pytest.mark.e2e

EVIL = "(a|a)*b"  # on a line of a's: 2^n steps
# The `b` on a line of its own: the file holds the pattern's literal, so scan.py's
# prefilter (issue 22) lets it through to line-by-line matching, where line 1 backtracks.
EVIL_TEXT = "a" * 5000 + "\nb\n"


def grep(pattern: str, **more: str) -> str:
    return "!tool grep " + json.dumps({"pattern": pattern, **more})


async def answered(client: Client, session: str) -> float:
    """Seconds for another session's whole turn."""
    started = time.monotonic()
    reply = await within(client.turn(session, "!echo still here"))
    assert reply["reply"] == "still here"
    return time.monotonic() - started


async def daemon(spawn: Any, env: dict[str, str], **settings: str) -> Client:
    client = await spawn(env={**env, **settings})
    await within(client.initialize())
    return client


async def test_a_backtracking_grep_stalls_no_one_and_is_cancelled_at_once(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    (workdir / "evil.txt").write_text(EVIL_TEXT)
    client = await daemon(spawn, env, ELELEM_GREP_FILE_TIMEOUT="600")
    stuck, other = [(await within(client.new_session()))["sessionId"] for _ in range(2)]
    turn = await within(client.start_turn(stuck, grep(EVIL)))
    scanner = await anywhere(f'"pattern": "{EVIL}"')  # the grep runs, in its own process
    await asyncio.sleep(0.5)
    for _ in range(3):
        assert await answered(client, other) < 1.0
    started = time.monotonic()
    await turn.cancel()
    result = await within(turn.result())
    assert time.monotonic() - started < 1.0
    assert result["stopReason"] == "cancelled"
    assert await all_gone(scanner) == []
    assert await answered(client, stuck) < 1.0  # the cancelled session goes on


async def test_a_backtracking_file_is_skipped_after_its_time_and_the_rest_searched(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    (workdir / "a-evil.txt").write_text(EVIL_TEXT)
    (workdir / "b-fine.txt").write_text("aab\n")
    client = await daemon(spawn, env, ELELEM_GREP_FILE_TIMEOUT="1")
    session = (await within(client.new_session()))["sessionId"]
    events: list[dict] = []
    reply = await within(client.turn(session, grep(EVIL), on_event=events.append), 30)
    (result,) = [e["params"]["result"] for e in events if e["method"] == "event/result"]
    assert reply["stopReason"] == "end_turn"
    assert result["content"].splitlines() == [
        "b-fine.txt:1:aab",
        "[skipped a-evil.txt: matching took more than 1 s (a pattern that backtracks; "
        "try a simpler one)]",
    ]
    assert result["exit_status"] == 0


async def test_a_search_ends_by_its_time_bound_with_what_it_found(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    (workdir / "0-match.txt").write_text("ab\n")
    for n in range(1, 20):
        (workdir / f"{n:02}-evil.txt").write_text(EVIL_TEXT)
    client = await daemon(spawn, env, ELELEM_GREP_FILE_TIMEOUT="0.5", ELELEM_SEARCH_TIMEOUT="2")
    session = (await within(client.new_session()))["sessionId"]
    events: list[dict] = []
    started = time.monotonic()
    await within(client.turn(session, grep(EVIL), on_event=events.append), 30)
    took = time.monotonic() - started
    (result,) = [e["params"]["result"] for e in events if e["method"] == "event/result"]
    lines = result["content"].splitlines()
    assert lines[0] == "0-match.txt:1:ab"
    assert lines[-1] == "[stopped after 2 s: the search took too long]"
    assert 2 <= took < 10  # not the 10 s the 19 files would take


async def test_a_search_over_a_huge_tree_stalls_no_one(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    tree = workdir / "tree"
    for a in range(40):
        for b in range(25):
            folder = tree / f"d{a}" / f"e{b}"
            folder.mkdir(parents=True)
            for c in range(20):
                (folder / f"f{c}.txt").write_text("nothing to see\n" * 20)
    client = await daemon(spawn, env)
    busy, other = [(await within(client.new_session()))["sessionId"] for _ in range(2)]
    # a glob without a literal (`?` × 40: no name is that long), so that scan.py walks
    # it all; one with a literal runs `find` from the daemon (search.found_glob)
    for prompt in (grep("needle"), "!tool glob " + json.dumps({"pattern": "?" * 40})):
        turn = await within(client.start_turn(busy, prompt))
        await anywhere("elelem_daemon/builtins/scan.py")
        assert await answered(client, other) < 1.0
        result = await within(turn.result(), 60)
        assert result["stopReason"] == "end_turn"


async def test_an_invalid_or_huge_pattern_is_a_clear_failure(
    spawn: Any, env: dict[str, str], workdir: Path
) -> None:
    client = await daemon(spawn, env)
    session = (await within(client.new_session()))["sessionId"]
    for pattern, error in [
        ("(", "invalid pattern: missing ), unterminated subpattern at position 0"),
        ("a" * 10_001, "pattern too long: 10001 characters (most 10000)"),
    ]:
        events: list[dict] = []
        await within(client.turn(session, grep(pattern), on_event=events.append))
        (result,) = [e["params"] for e in events if e["method"] == "event/result"]
        assert (result["ok"], result["result"]["error"]) == (False, error)
