"""A delta's frame (`notify_text`, issue 22) is byte for byte the frame `notify` writes,
and `Events` sends through it the notifications protocol.md says, in order."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pygls.server import JsonRPCServer

from elelem_daemon.faces.daemon.events import Events
from elelem_daemon.faces.daemon.protocol import ElelemProtocol, converter_factory
from elelem_daemon.faces.daemon.stdio import StdioPeer

TEXTS = [
    "c1 ",
    "",
    "é ü 中文 🙂",
    "\ud800 lone",
    'quote " back \\ slash',
    "\n\r\t\x00\x1f\x7f",
    "x" * 70000,
]


class Capture:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)


def protocol() -> tuple[ElelemProtocol, Capture]:
    server = JsonRPCServer(ElelemProtocol, converter_factory)
    proto: ElelemProtocol = server.protocol  # type: ignore[assignment]
    capture = Capture()
    proto.set_writer(capture)  # type: ignore[arg-type]
    return proto, capture


@pytest.mark.parametrize("text", TEXTS)
def test_a_delta_frame_is_the_plain_frame(text: str) -> None:
    proto, capture = protocol()
    head = {"sessionId": "0f3c2a9e", "turnId": 7}
    proto.notify("event/saying", {**head, "text": text})
    proto.notify_text("event/saying", head, text)
    proto.notify_text("event/saying", head, text)  # the kept head
    assert capture.frames[1] == capture.frames[0] == capture.frames[2]


@pytest.mark.parametrize(
    "head",
    [
        {"sessionId": "s", "turnId": None},
        {"sessionId": "s", "turnId": True},
        {"sessionId": "s é", "turnId": 2**70, "ratio": float("nan")},
        {"sessionId": "s", "text": "first", "turnId": 1},  # text not last: the plain path
        {},
    ],
)
def test_odd_heads_give_the_plain_frame(head: dict[str, Any]) -> None:
    proto, capture = protocol()
    proto.notify("event/thinking", {**head, "text": "t"})
    proto.notify_text("event/thinking", head, "t")
    assert capture.frames[1] == capture.frames[0]


def test_a_new_head_or_method_is_encoded_again() -> None:
    proto, capture = protocol()
    first, second = {"sessionId": "a", "turnId": 1}, {"sessionId": "a", "turnId": 2}
    sent = [
        ("event/saying", first, "x"),
        ("event/thinking", first, "y"),
        ("event/saying", second, "z"),
        ("event/thinking", first, "w"),
        ("event/saying", second, 5),  # not a string: the encoder writes what it is
    ]
    for method, head, text in sent:
        proto.notify_text(method, head, text)  # type: ignore[arg-type]
    plain, expected = protocol()
    for method, head, text in sent:
        plain.notify(method, {**head, "text": text})
    assert capture.frames == expected.frames


class Plain:
    """A peer with `notify` alone (tests' fakes, the ACP connection)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return None

    def stop(self, code: int) -> None:
        pass


async def test_events_send_the_same_frames_through_either_peer() -> None:
    proto, capture = protocol()
    stopped: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    fast, plain = Events(StdioPeer(stopped, proto)), Plain()
    slow = Events(plain)
    for events in (fast, slow):
        events.saying("before the session")  # logged, not sent
        events.session_id, events.turn_id = "s1", 1
        events.saying("a")
        events.thinking("b")
        events.turn_id = 2
        events.saying("c")
        child = events.nested("call_1")
        child.saying("d")  # a sub-agent's: parentToolCallId after the text
        events.session_id = "s2"
        events.saying("e")
    again, expected = protocol()
    for method, params in plain.sent:
        again.notify(method, params)
    assert capture.frames == expected.frames
    assert [p["text"] for _, p in plain.sent] == ["a", "b", "c", "d", "e"]
    assert list(plain.sent[3][1]) == ["sessionId", "turnId", "text", "parentToolCallId"]
