"""RpcError and the one table of error codes, for both editor faces and the client.

Every ElelemError a face lets out becomes an error response through `rpc_error`: the
code from CODES (the first class of the error's MRO found there; -32000 for any other
kind) and `data: {kind, ...error.data}`. No face picks a code for an ElelemError.

    code     kind                  the error
    -32700   parse_error           (protocol) not JSON, or a frame that cannot be read
    -32600   invalid_request       (protocol) not a JSON-RPC request
    -32600   shutting_down         ShuttingDown: a request after `shutdown` (daemon)
    -32601   method_not_found      (protocol)
    -32602   invalid_params        InvalidParams, UnknownProvider,
             (its kind)            AttachmentError (invalid_attachment),
                                   UnknownTurn (unknown_turn: a rewind's turnId)
    -32603   internal_error        (protocol) a bug or a plugin's exception
    -32800   request_cancelled     (protocol) cancelled where no result applies
    -32000   (its kind)            any other ElelemError (ProviderError, ...)
    -32001   session_busy          SessionBusy: a turn or command already runs there
             steer_queue_full      SteerRefused: too many steers wait already
    -32002   unknown_session       UnknownSession: no session has that id here (none open,
                                   or, NoStoredSession, none stored): ACP's "resource not
                                   found", the one code of every method (close, resume,
                                   load, delete, prompt, ...)
    -32003   session_locked        SessionLocked: another elelem process has it open
    -32004   outside_changes       OutsideChanges: a rewind would overwrite the user's own
                                   edits; `data.files` is the plan, resend with `force`
    -32005   no_checkpoint         NoCheckpoint: no checkpoint can restore that turn's files
    -32006   not_running           NotRunning: a steer where no turn runs (send a turn)

-32002 is ACP's "resource not found", and it means that in both faces (issue 38: an
unknown open session was -32602 before, a stored one -32002). ACP reads
-32000 as "authentication required": for ACP that is what a provider without its key
(ProviderError, the commonest "other kind") asks for.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import (
    AttachmentError,
    ElelemError,
    InvalidParams,
    NoCheckpoint,
    NotRunning,
    OutsideChanges,
    SessionBusy,
    SessionLocked,
    ShuttingDown,
    UnknownProvider,
    UnknownSession,
    UnknownTurn,
)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
OTHER = -32000
SESSION_BUSY = -32001
RESOURCE_NOT_FOUND = -32002
SESSION_LOCKED = -32003
OUTSIDE_CHANGES = -32004
NO_CHECKPOINT = -32005
NOT_RUNNING = -32006

CODES: dict[type[ElelemError], int] = {
    InvalidParams: INVALID_PARAMS,
    UnknownProvider: INVALID_PARAMS,
    AttachmentError: INVALID_PARAMS,
    UnknownSession: RESOURCE_NOT_FOUND,  # NoStoredSession too: one code
    SessionBusy: SESSION_BUSY,
    SessionLocked: SESSION_LOCKED,
    ShuttingDown: INVALID_REQUEST,
    UnknownTurn: INVALID_PARAMS,
    NoCheckpoint: NO_CHECKPOINT,
    NotRunning: NOT_RUNNING,
    OutsideChanges: OUTSIDE_CHANGES,
}
KINDS = {  # code -> data.kind, for the protocol's own errors (a message, not an ElelemError)
    PARSE_ERROR: "parse_error",
    INVALID_REQUEST: "invalid_request",
    METHOD_NOT_FOUND: "method_not_found",
    INVALID_PARAMS: "invalid_params",
    REQUEST_CANCELLED: "request_cancelled",
    INTERNAL_ERROR: "internal_error",
}


def code_of(error: ElelemError) -> int:
    for cls in type(error).__mro__:
        if cls in CODES:
            return CODES[cls]
    return OTHER


class RpcError(Exception):
    """A JSON-RPC error: raised by a handler (the face answers it as an error response),
    and raised to the caller when the other end answers a request with one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def received(cls, error: Any) -> RpcError:
        """The `error` member of a response, whatever the peer put there."""
        if not isinstance(error, dict):
            return cls(INTERNAL_ERROR, str(error))
        code = error.get("code")
        return cls(
            code if isinstance(code, int) else INTERNAL_ERROR,
            str(error.get("message", "")),
            error.get("data"),
        )

    @property
    def kind(self) -> str | None:
        """`data.kind`, the name clients branch on."""
        kind = self.data.get("kind") if isinstance(self.data, dict) else None
        return kind if isinstance(kind, str) else None

    def to_dict(self) -> dict[str, Any]:
        """The `error` member; a protocol code's `data.kind` is filled in when missing,
        so every error a face sends names its kind."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        data = self.data
        if self.code in KINDS and (data is None or (isinstance(data, dict) and "kind" not in data)):
            data = {"kind": KINDS[self.code], **(data or {})}
        if data is not None:
            error["data"] = data
        return error

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"


def rpc_error(error: ElelemError) -> RpcError:
    """The error response an ElelemError becomes, in either face."""
    return RpcError(code_of(error), str(error), {"kind": error.kind, **error.data})


def invalid_params(message: str, **data: Any) -> RpcError:
    """A face's own check of a request failed (ACP's field checks): `data.kind` is
    `invalid_params`, as on every error a face sends."""
    return RpcError(INVALID_PARAMS, message, {"kind": KINDS[INVALID_PARAMS], **data})
