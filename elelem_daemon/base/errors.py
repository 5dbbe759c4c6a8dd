"""Errors, and who sees them.

    ElelemError                 a problem the user must act on; shown as one line
    ├── UnknownProvider         no plugin or package provides the provider named
    ├── UnknownSession          a sessionId that names no session open in this face
    │   └── NoStoredSession     ... nor a stored one (or it is not a valid id, or unreadable)
    ├── SessionBusy             a turn or command is already running in that session
    │   └── SteerRefused        too many steers wait for the running turn already
    ├── NotRunning              a steer for a session where no turn runs
    ├── SessionLocked           a stored session is open in another elelem process
    ├── InvalidParams           a request's params are missing or of the wrong type
    ├── AttachmentError         an attachment or `@` mention the turn cannot take (a binary
    │                           or oversized file, an image for a provider without vision);
    │                           raised before anything is kept or sent
    ├── ShuttingDown            (daemon) a request after `shutdown`
    ├── UnknownTurn             a rewind names a turn the session's conversation does not hold
    ├── UnknownMode             (an InvalidParams) a mode id the session does not have:
    │                           `data.modes` lists the ones it has
    ├── NoCheckpoint            a rewind of files, where no checkpoint can restore that turn
    │                           (checkpoints off, pruned, or its checkpoint failed)
    ├── OutsideChanges          a rewind would overwrite files changed outside the agent
    │                           since (the user's own edits): `data` holds the plan; resend
    │                           with `force` once the user agreed
    ├── CheckpointFailed        the checkpoint engine could not restore (timeout, git, disk)
    └── ProviderError           a provider's HTTP/API failure; ends the turn as `Error: ...`
        └── providers.http.Failure   one failed HTTP exchange, and whether to retry it

Elsewhere, not ElelemErrors:
- `jsonrpc.errors.RpcError`: a JSON-RPC error response, sent or received (the faces
  turn every ElelemError into one through `jsonrpc.errors.CODES`, the one code table);
- `agent.TurnCancelled`: a `CancelledError` carrying what a cancelled turn kept;
- `builtins.permissions.PermissionDenied`: a before hook refusing a tool call.

Tool failures are not exceptions to anyone but the Toolbox: they become a
`Result` with `ok: false` that the model reads.

`kind` names the error for clients (both editor faces send it as `error.data.kind`);
`data` holds what a client may need besides the message (added to `error.data`).
"""

from typing import Any


class ElelemError(Exception):
    kind = "elelem_error"

    def __init__(self, message: str = "", **data: Any) -> None:
        super().__init__(message)
        self.data = data


class UnknownProvider(ElelemError):
    kind = "unknown_provider"


class UnknownSession(ElelemError):
    kind = "unknown_session"


class NoStoredSession(UnknownSession):
    """Same `kind` as UnknownSession; its code is `resource not found` (jsonrpc.errors)."""


class SessionBusy(ElelemError):
    kind = "session_busy"


class SteerRefused(SessionBusy):
    """`data`: `limit` (how many steers may wait at once)."""

    kind = "steer_queue_full"


class NotRunning(ElelemError):
    """A steer (`session/steer`) for a session where no turn runs: send a turn instead."""

    kind = "not_running"


class ProviderError(ElelemError):
    kind = "provider_error"


class SessionLocked(ElelemError):
    kind = "session_locked"


class InvalidParams(ElelemError):
    kind = "invalid_params"


class AttachmentError(ElelemError):
    """`data`: `reason` (invalid, not_found, refused, binary, too_large, too_many, vision),
    `index` (the attachment's place in the list, absent for a mention), `type`, and
    `mention` (the `@` text) for a mention."""

    kind = "invalid_attachment"


class TrustNotKept(ElelemError):
    """The trusted-folders file cannot take the folder (a link planted in its place, an
    unwritable folder): `data.path` is the file. Nothing was trusted."""

    kind = "trust_not_kept"


class ShuttingDown(ElelemError):
    kind = "shutting_down"


class UnknownMode(InvalidParams):
    """`data`: `modes` (the ids the session has). Code -32602, as any InvalidParams."""

    kind = "unknown_mode"


class UnknownTurn(ElelemError):
    """`data`: `turnId`."""

    kind = "unknown_turn"


class NoCheckpoint(ElelemError):
    """`data`: `turnId`, `reason` (`disabled`, `missing`, `failed`)."""

    kind = "no_checkpoint"


class OutsideChanges(ElelemError):
    """`data`: `turnId`, `files` (the plan: restored, created, deleted, outside,
    unsaved, ...)."""

    kind = "outside_changes"


class CheckpointFailed(ElelemError):
    """`data`: `turnId`, `reason` (the engine's kind: `timeout`, `git_failed`, `busy`,
    `io_error`, ...)."""

    kind = "checkpoint_failed"
