"""Errors, and who sees them.

    ElelemError                 a problem the user must act on; shown as one line
    ├── UnknownProvider         no plugin or package provides the provider named
    ├── UnknownSession          a sessionId that names no open (daemon) or stored session
    ├── SessionBusy             (daemon) a turn is already running in that session
    ├── SessionLocked           a stored session is open in another elelem process
    └── ProviderError           a provider's HTTP/API failure; ends the turn as `Error: ...`

Tool failures are not exceptions to anyone but the Toolbox: they become a
`Result` with `ok: false` that the model reads.
"""


class ElelemError(Exception):
    kind = "elelem_error"


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
