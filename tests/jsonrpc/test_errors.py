"""The one table of error codes, and RpcError both ways."""

from __future__ import annotations

import pytest

from elelem_daemon.base import errors
from elelem_daemon.jsonrpc.errors import CODES, RpcError, code_of, rpc_error


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (errors.InvalidParams("x"), -32602),
        (errors.UnknownProvider("x"), -32602),
        (errors.UnknownSession("x"), -32002),  # one code, open or stored (issue 38)
        (errors.AttachmentError("x"), -32602),
        (errors.NoStoredSession("x"), -32002),
        (errors.SessionBusy("x"), -32001),
        (errors.SessionLocked("x"), -32003),
        (errors.ShuttingDown("x"), -32600),
        (errors.UnknownTurn("x"), -32602),
        (errors.OutsideChanges("x"), -32004),
        (errors.NoCheckpoint("x"), -32005),
        (errors.CheckpointFailed("x"), -32000),
        (errors.ProviderError("x"), -32000),
        (errors.ElelemError("x"), -32000),
    ],
)
def test_every_error_has_one_code(error: errors.ElelemError, code: int) -> None:
    assert code_of(error) == code


def test_no_code_means_two_things() -> None:
    by_code: dict[int, set[str]] = {}
    for cls, code in CODES.items():
        by_code.setdefault(code, set()).add(cls.kind)
    assert by_code[-32002] == {"unknown_session"} and by_code[-32003] == {"session_locked"}


def test_an_error_becomes_a_response_with_its_kind_and_data() -> None:
    error = rpc_error(errors.SessionBusy("busy", sessionId="s1"))
    assert error.to_dict() == {
        "code": -32001,
        "message": "busy",
        "data": {"kind": "session_busy", "sessionId": "s1"},
    }


def test_a_received_error_is_read_whatever_it_holds() -> None:
    got = RpcError.received(
        {"code": -32002, "message": "gone", "data": {"kind": "unknown_session"}}
    )
    assert (got.code, got.message, got.kind, str(got)) == (
        -32002,
        "gone",
        "unknown_session",
        "gone (-32002)",
    )
    odd = RpcError.received("not an object")
    assert (odd.code, odd.kind, odd.data) == (-32603, None, None)
    assert RpcError.received({"code": "x", "message": 5}).to_dict() == {
        "code": -32603,
        "message": "5",
        "data": {"kind": "internal_error"},  # every error sent names its kind
    }
