"""Errors, and who sees them.

    ElelemError                 a problem the user must act on; shown as one line
    ├── UnknownProvider         no plugin or package provides the provider named
    ├── UnknownSession          a sessionId that names no open (daemon) or stored session
    ├── SessionBusy             (daemon) a turn is already running in that session
    ├── SessionLocked           a stored session is open in another elelem process
    ├── InvalidParams           (daemon) a request's params are missing or of the wrong type
    ├── AttachmentError         an attachment or `@` mention the turn cannot take (a binary
    │                           or oversized file, an image for a provider without vision);
    │                           raised before anything is kept or sent
    └── ProviderError           a provider's HTTP/API failure; ends the turn as `Error: ...`

Tool failures are not exceptions to anyone but the Toolbox: they become a
`Result` with `ok: false` that the model reads.

`kind` names the error for clients (the daemon sends it as `error.data.kind`); `data`
holds what a client may need besides the message (the daemon adds it to `error.data`).
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


class SessionBusy(ElelemError):
    kind = "session_busy"


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
