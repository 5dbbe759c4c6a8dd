"""Protocol fuzzing with hypothesis, against one long-lived daemon per test: framing
(headers, lengths, bodies, junk) and the methods' params. After every case the daemon
must be alive, answer a sentinel request (no hang), answer each well-formed request
exactly once, and send only valid messages: no internal_error, every error with a
code, a kind and a bounded message.

CI runs FUZZ_CASES (2,500 + 2,500) cases; ELELEM_FUZZ_LONG=1 runs 25,000 + 25,000, and
ELELEM_FUZZ_CASES=N runs N of each."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fuzzing import MAX_FRAME, Fuzzed, check, frame

pytestmark = pytest.mark.e2e

FUZZ_CASES = 2500
LONG_CASES = 25_000
CASES = int(
    os.environ.get("ELELEM_FUZZ_CASES")
    or (LONG_CASES if os.environ.get("ELELEM_FUZZ_LONG") == "1" else FUZZ_CASES)
)
SETTINGS = settings(
    max_examples=CASES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    home, cwd = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("project")
    fuzzed = Fuzzed(home, cwd)
    yield fuzzed
    assert fuzzed.close() in (0, 1)
    assert fuzzed.anomalies == []


KINDS = {  # protocol.md, Errors (internal_error excluded: it is a bug)
    "invalid_request",
    "method_not_found",
    "invalid_params",
    "unknown_session",
    "unknown_provider",
    "session_busy",
    "request_cancelled",
    "session_locked",
}


def verify(daemon: Fuzzed, got: list[dict[str, Any]], ids: list[Any]) -> None:
    problems = [p for p in map(check, got) if p]
    assert problems == [], problems[:3]
    counts = Counter(m.get("id") for m in got if "method" not in m)
    assert all(counts[i] <= 1 for i in ids), counts  # never twice
    sentinels = [m for m in got if str(m.get("id")).startswith("sentinel-")]
    assert all("result" in m for m in sentinels), sentinels  # not shut down
    assert daemon.process.poll() is None


# -- framing ---------------------------------------------------------------------------
FINITE = st.floats(allow_nan=False, allow_infinity=False)  # JSON has no NaN nor Infinity
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | FINITE | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=6,
)
HEADER_NAMES = st.sampled_from(
    [b"Content-Length", b"content-length", b"CONTENT-LENGTH", b"Content-Type", b"X-Junk"]
) | st.binary(min_size=1, max_size=12)
LINE_ENDS = st.sampled_from([b"\r\n", b"\n", b"\r", b""])


ID = "@ID@"
REQUESTS = ["shutdown", "session/new", "session/turn", "session/close", "initialize"]
NOTICES = ["exit", "session/cancel", "initialized"]  # with an id: invalid_request


NOT_EXIT = "exit".__ne__


def harmless(value: Any) -> bool:
    """Not the one message that rightly ends (or stops) the daemon."""
    return not (isinstance(value, dict) and value.get("method") in ("exit", "shutdown"))


@st.composite
def parts(draw: st.DrawFn) -> tuple[bytes, list[Any]]:
    """One chunk of a framing case, and the ids of the well-formed requests in it."""
    kind = draw(
        st.sampled_from(
            ["request", "notification", "json", "headers", "lying", "junk", "utf8", "big"]
        )
    )
    msg_id = ID  # replaced by a fresh id once the case is drawn
    if kind == "request":
        method = draw(st.sampled_from(["session/list", "session/context", "nope", *NOTICES]))
        return frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}}), [msg_id]
    if kind == "notification":  # any name, a request's name included: it is ignored
        method = draw(
            st.sampled_from(REQUESTS) | st.text(max_size=20).filter(lambda m: m != "exit")
        )
        return frame({"jsonrpc": "2.0", "method": method, "params": {}}), []
    if kind == "json":  # any JSON value as a body
        return frame(draw(JSON.filter(harmless))), []
    if kind == "headers":  # any header lines, then a body
        lines = draw(
            st.lists(
                st.tuples(HEADER_NAMES, st.binary(max_size=12), LINE_ENDS), min_size=1, max_size=4
            )
        )
        head = b"".join(name + b": " + value + end for name, value, end in lines)
        return head + draw(LINE_ENDS) + draw(st.binary(max_size=64)), []
    if kind == "lying":  # a length that is not the body's
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "session/list"}).encode()
        length = draw(st.integers(0, 2 * MAX_FRAME))
        return b"Content-Length: %d\r\n\r\n" % length + body[: draw(st.integers(0, len(body)))], []
    if kind == "junk":
        return draw(st.binary(max_size=200)), []
    if kind == "utf8":
        text = draw(st.text(max_size=30)).encode("utf-8", "surrogatepass")
        return frame_bytes(b'{"jsonrpc":"2.0","method":"x","params":{"t":"' + text + b'"}}'), []
    return b"Content-Length: %d\r\n\r\n" % draw(st.integers(MAX_FRAME + 1, 2 * MAX_FRAME)), []


def frame_bytes(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


@SETTINGS
@given(data=st.data())
def test_framing(daemon: Fuzzed, data: st.DataObject) -> None:
    case = daemon.cases
    sent, ids = b"", []
    for n, (chunk, found) in enumerate(data.draw(st.lists(parts(), min_size=1, max_size=6))):
        fresh = f"r{case}-{n}"
        sent += chunk.replace(ID.encode(), fresh.encode()) if ID.encode() in chunk else chunk
        ids += [fresh for _ in found]
    got = daemon.exchange(sent, set())  # a request after a lying length may be swallowed
    verify(daemon, got, ids)


# -- params ----------------------------------------------------------------------------
METHODS = [
    "initialize",
    "session/new",
    "session/turn",
    "session/command",
    "session/complete",
    "session/list",
    "session/load",
    "session/delete",
    "session/close",
    "session/context",
    "session/trust",
    "session/cancel",
    "$/cancelRequest",
    "initialized",
]
TEXTS = st.text(max_size=40).filter(lambda t: not t.startswith("!")) | st.sampled_from(
    ["!echo hi", "!fail on purpose", "!stream 3", "!tool read {}", "!tool nope {}"]
)
LINES = st.sampled_from(
    [
        "/help",
        "/context",
        "/context json",
        "/clear",
        "/tools",
        "/model",
        "/model x",
        "/provider stub",
        "/provider nope",
        "/compact",
        "/exit",
        "/",
        "/nope",
        "plain",
        "",
    ]
) | st.text(max_size=30).map(lambda t: "/" + t).filter(lambda t: not t.startswith("/provider "))


VALUES = {
    "sessionId": st.sampled_from(["@SESSION@", "", "gone"]) | st.text(max_size=10),
    "text": TEXTS,
    "line": LINES,
    "cwd": st.sampled_from([".", "~", "", "/nonexistent", "\0", "~nobody-here/x", "x" * 300]),
    "provider": st.sampled_from(["stub", "nope", ""]),
    "model": st.text(max_size=10),
    "trusted": st.booleans(),
    "clientInfo": st.fixed_dictionaries({"name": st.text(max_size=5)}),
    "capabilities": st.fixed_dictionaries(
        {"input": st.fixed_dictionaries({"ask": st.booleans() | JSON})}
    ),
    "processId": st.sampled_from([None, os.getpid()]),
    "id": st.integers(-5, 5) | st.text(max_size=5),
    "extra": JSON,
}
OWN = {  # the params each method reads
    "initialize": {"processId", "clientInfo", "capabilities"},
    "session/new": {"cwd", "provider", "model", "trusted"},
    "session/turn": {"sessionId", "text"},
    "session/command": {"sessionId", "line"},
    "session/complete": {"sessionId", "text"},
    "session/close": {"sessionId"},
    "session/load": {"sessionId", "provider", "model", "trusted"},
    "session/delete": {"sessionId"},
    "session/context": {"sessionId"},
    "session/trust": {"sessionId"},
    "session/cancel": {"sessionId"},
    "$/cancelRequest": {"id"},
}
KEYS = st.lists(st.sampled_from(sorted(VALUES)), max_size=4, unique=True)


@st.composite
def params(draw: st.DrawFn, method: str, session: str) -> Any:
    """Params for a method: mostly of the right shape with wrong or odd values."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON)  # anything at all
    keys = set(draw(KEYS)) | (OWN.get(method, set()) if draw(st.booleans()) else set())
    value = {key: draw(VALUES[key] if draw(st.integers(0, 4)) else JSON) for key in sorted(keys)}
    if value.get("sessionId") == "@SESSION@":
        value["sessionId"] = session
    if method in ("session/close", "session/cancel", "session/delete") and (
        value.get("sessionId") == session
    ):
        value["sessionId"] = "not-the-shared-one"  # later cases keep their session
    return value


@pytest.fixture(scope="module")
def shared(daemon: Fuzzed) -> str:
    got = daemon.exchange(frame(daemon.request("s", "session/new", {})), {"s"})
    return next(m["result"]["sessionId"] for m in got if m.get("id") == "s")


@SETTINGS
@given(data=st.data())
def test_params(daemon: Fuzzed, shared: str, data: st.DataObject) -> None:
    case = daemon.cases
    calls = data.draw(st.lists(st.sampled_from(METHODS), min_size=1, max_size=4))
    sent, ids = b"", []
    for n, method in enumerate(calls):
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if method not in ("session/cancel", "$/cancelRequest", "initialized"):
            message["id"] = f"p{case}-{n}"
            ids.append(message["id"])
        if data.draw(st.booleans()) or method != "session/list":
            message["params"] = data.draw(params(method, shared))
        sent += frame(message)
    got = daemon.exchange(sent, set(ids), filler=b"")  # well-formed frames: none left open
    verify(daemon, got, ids)
    counts = Counter(m.get("id") for m in got if "method" not in m)
    assert all(counts[i] == 1 for i in ids), (counts, ids, got)  # each exactly once
    kinds = {m["error"]["data"]["kind"] for m in got if m.get("id") in ids and "error" in m}
    assert kinds <= KINDS, kinds


def test_the_cases_ran(daemon: Fuzzed) -> None:
    """Both fuzz tests above ran their cases against this one daemon process."""
    assert daemon.cases >= 2 * CASES


UNUSABLE = [
    ("session/new", "~nobody-here/x"),  # RuntimeError from expanduser
    ("session/new", "x" * 300),  # OSError ENAMETOOLONG
    ("session/new", "\0"),
    ("session/list", "~nobody-here/x"),  # the session store's filter (issue 8)
    ("session/list", "\0"),  # ValueError: embedded null byte
]


@pytest.mark.parametrize("method, cwd", UNUSABLE)
def test_found_by_fuzzing_an_unusable_cwd_is_invalid_params(
    daemon: Fuzzed, method: str, cwd: str
) -> None:
    """These were internal errors."""
    got = daemon.exchange(frame(daemon.request("cwd", method, {"cwd": cwd})), {"cwd"})
    (answer,) = [m for m in got if m.get("id") == "cwd"]
    assert answer["error"]["data"]["kind"] == "invalid_params"
    assert answer["error"]["data"]["errors"][0].startswith("cwd: ")
