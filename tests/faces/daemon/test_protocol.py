"""The daemon face on pygls's public API (protocol.py, wiring.py): what it needs of pygls
and adds on top, pinned here so a pygls release within its major that changes any of
it fails this file first: the request id a handler sees (`msg_id`), a handler's failure
sent as the error protocol.md gives (code, `data.kind`, no traceback), `$/cancelRequest`
cancelling a running handler (or one not started yet), an id in use refused, our own
questions answered, and cancelled (`$/cancelRequest` sent, a late answer dropped), every
body plain JSON (no NaN) framed with Content-Length alone."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest

from elelem_daemon.base.errors import InvalidParams
from elelem_daemon.faces.daemon.protocol import (
    ElelemProtocol,
    ElelemServer,
    Framed,
    converter_factory,
)
from elelem_daemon.faces.daemon.wiring import register

BOUND = 30


class Capture:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def bodies(self) -> list[dict[str, Any]]:
        found, at = [], 0
        while at < len(self.data):
            end = self.data.index(b"\r\n\r\n", at)
            head = self.data[at:end].decode("ascii")
            assert head.startswith("Content-Length: ") and "\r\n" not in head, head
            size = int(head.removeprefix("Content-Length: "))
            body = self.data[end + 4 : end + 4 + size]
            assert len(body) == size and body.isascii()
            found.append(json.loads(body, parse_constant=pytest.fail))
            at = end + 4 + size
        return found


class Daemon:
    """What `register` reads of a Daemon: the two tables."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.gate = asyncio.Event()
        self.requests = {
            "echo": self.echo,
            "odd": self.odd,
            "refuse": self.refuse,
            "crash": self.crash,
            "wait": self.wait,
            "ask": self.ask,
        }
        self.notices: dict[str, Any] = {"note": self.seen.append}
        self.protocol: ElelemProtocol | None = None

    async def request(self, method: str, params: Any) -> Any:
        return await self.requests[method](params)

    def notice(self, method: str, params: Any) -> None:
        self.notices[method](params)

    async def echo(self, params: Any) -> Any:
        assert self.protocol is not None
        return {"params": dict(params), "id": self.protocol.msg_id}

    async def odd(self, params: Any) -> Any:
        return {"values": [math.inf, -math.inf, math.nan, 1.5]}

    async def refuse(self, params: Any) -> Any:
        raise InvalidParams("cwd: not a directory", errors=["cwd: not a directory"])

    async def crash(self, params: Any) -> Any:
        raise RuntimeError("a bug")

    async def wait(self, params: Any) -> Any:
        await self.gate.wait()
        return "done"

    async def ask(self, params: Any) -> Any:
        assert self.protocol is not None
        return await self.protocol.ask("input/ask", {"q": 1}, "elelem-1")


def build() -> tuple[ElelemProtocol, Capture, Daemon]:
    server = ElelemServer(ElelemProtocol, converter_factory)
    protocol: ElelemProtocol = server.protocol  # type: ignore[assignment]
    capture, daemon = Capture(), Daemon()
    protocol.set_writer(Framed(capture))
    daemon.protocol = protocol
    register(server, daemon)  # type: ignore[arg-type]
    return protocol, capture, daemon


def send(protocol: ElelemProtocol, message: dict[str, Any]) -> None:
    assert protocol.receive(json.dumps(message).encode())


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def answer(capture: Capture, msg_id: Any) -> dict[str, Any]:
    async with asyncio.timeout(BOUND):
        while True:
            for body in capture.bodies():
                if body.get("id") == msg_id and "method" not in body:
                    return body
            await asyncio.sleep(0.01)


async def test_a_handler_sees_its_request_id_and_its_plain_params() -> None:
    protocol, capture, _ = build()
    send(protocol, {"jsonrpc": "2.0", "id": 4, "method": "echo", "params": {"a": [1]}})
    assert await answer(capture, 4) == {
        "jsonrpc": "2.0",
        "id": 4,
        "result": {"params": {"a": [1]}, "id": 4},
    }
    assert list(await answer(capture, 4)) == ["jsonrpc", "id", "result"]


async def test_no_nan_or_infinity_is_ever_written() -> None:
    protocol, capture, _ = build()
    send(protocol, {"jsonrpc": "2.0", "id": 1, "method": "odd"})
    assert (await answer(capture, 1))["result"] == {"values": [None, None, None, 1.5]}
    protocol.notify("event/x", {"v": math.nan})
    assert capture.bodies()[-1] == {"jsonrpc": "2.0", "method": "event/x", "params": {"v": None}}


async def test_a_handler_failure_is_the_documented_error(caplog) -> None:
    protocol, capture, _ = build()
    send(protocol, {"jsonrpc": "2.0", "id": "r", "method": "refuse"})
    error = (await answer(capture, "r"))["error"]
    assert error == {
        "code": -32602,
        "message": "cwd: not a directory",
        "data": {"kind": "invalid_params", "errors": ["cwd: not a directory"]},
    }
    assert "Traceback" not in caplog.text  # an answer, not a bug
    send(protocol, {"jsonrpc": "2.0", "id": "c", "method": "crash"})
    error = (await answer(capture, "c"))["error"]
    assert error == {
        "code": -32603,
        "message": "internal error: RuntimeError: a bug",
        "data": {"kind": "internal_error"},
    }


async def test_an_unknown_method_has_a_kind() -> None:
    protocol, capture, _ = build()
    send(protocol, {"jsonrpc": "2.0", "id": 9, "method": "nope/nothing"})
    error = (await answer(capture, 9))["error"]
    assert error["code"] == -32601 and error["data"] == {"kind": "method_not_found"}
    assert "nope/nothing" in error["message"]


async def test_cancel_request_cancels_a_running_handler() -> None:
    protocol, capture, _ = build()
    send(protocol, {"jsonrpc": "2.0", "id": 2, "method": "wait"})
    await settle()
    assert 2 in protocol.running
    send(protocol, {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}})
    assert (await answer(capture, 2))["error"] == {
        "code": -32800,
        "message": "request 2 was cancelled",
        "data": {"kind": "request_cancelled"},
    }
    assert 2 not in protocol.running


async def test_cancel_request_before_the_handler_ran() -> None:
    protocol, capture, _ = build()
    send(protocol, {"jsonrpc": "2.0", "id": 3, "method": "wait"})
    send(protocol, {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 3}})
    assert (await answer(capture, 3))["error"]["data"] == {"kind": "request_cancelled"}
    assert protocol.running == {}


async def test_an_id_in_use_is_refused_and_the_first_goes_on() -> None:
    protocol, capture, daemon = build()
    send(protocol, {"jsonrpc": "2.0", "id": 5, "method": "wait"})
    send(protocol, {"jsonrpc": "2.0", "id": 5, "method": "echo"})
    refused = await answer(capture, 5)
    assert refused["error"]["data"] == {"kind": "invalid_request"}
    assert "already in use" in refused["error"]["message"]
    daemon.gate.set()
    async with asyncio.timeout(BOUND):
        while not any(b.get("result") == "done" for b in capture.bodies()):
            await asyncio.sleep(0.01)


async def test_our_question_is_answered_and_its_id_is_ours_meanwhile() -> None:
    protocol, capture, _ = build()
    send(protocol, {"jsonrpc": "2.0", "id": 1, "method": "ask"})
    await settle()
    question = capture.bodies()[-1]
    assert question == {
        "id": "elelem-1",
        "method": "input/ask",
        "jsonrpc": "2.0",
        "params": {"q": 1},
    }
    send(protocol, {"jsonrpc": "2.0", "id": "elelem-1", "method": "echo"})  # ours: refused
    assert (await answer(capture, "elelem-1"))["error"]["data"] == {"kind": "invalid_request"}
    send(protocol, {"jsonrpc": "2.0", "id": "elelem-1", "result": {"text": "yes"}})
    assert (await answer(capture, 1))["result"] == {"text": "yes"}
    assert protocol.asked == set()


async def test_a_cancelled_question_is_cancelled_and_its_late_answer_dropped(caplog) -> None:
    protocol, capture, _ = build()
    send(protocol, {"jsonrpc": "2.0", "id": 1, "method": "ask"})
    await settle()
    send(protocol, {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}})
    assert (await answer(capture, 1))["error"]["data"] == {"kind": "request_cancelled"}
    told = [b for b in capture.bodies() if b.get("method") == "$/cancelRequest"]
    assert told == [{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "elelem-1"}}]
    send(protocol, {"jsonrpc": "2.0", "id": "elelem-1", "result": {"text": "late"}})
    await settle()
    assert "elelem-1" not in protocol.abandoned
    assert "could not handle" not in caplog.text and "Traceback" not in caplog.text


async def test_a_notice_is_a_plain_call() -> None:
    protocol, _, daemon = build()
    send(protocol, {"jsonrpc": "2.0", "method": "note", "params": {"n": 1}})
    assert daemon.seen == [{"n": 1}]
