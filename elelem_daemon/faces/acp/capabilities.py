"""What the ACP face answers `initialize` with: its capabilities, as one table.

`sessionCapabilities` lists the session methods served (`list`, `resume`, `close`,
`delete`, `additionalDirectories`, `systemPrompt`, and `fork`, unstable, only with its
own capability); `auth` and `authMethods` come from auth.py (the sign-in seam);
steering (a `session/prompt` sent during a turn steers it: docs/acp.md, "Steering") is
said in `_meta` the way clients read it: claude-agent-acp's `claudeCode.promptQueueing`
(Zed and others send a prompt during a turn only to an agent that says it), and
`elelem.steering`.
"""

from __future__ import annotations

from typing import Any

from ... import __version__
from . import auth, system

PROTOCOL_VERSION = 1


def session_capabilities() -> dict[str, Any]:
    return {
        "list": {},
        "resume": {},
        "close": {},
        "delete": {},
        "fork": {},
        "additionalDirectories": {},
        "systemPrompt": system.capabilities(),
    }


def answer(client: dict[str, Any], images: bool) -> dict[str, Any]:
    """`initialize`'s result for a client with these capabilities."""
    return {
        "protocolVersion": PROTOCOL_VERSION,  # the asked one if we speak it, else our latest
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": images, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": session_capabilities(),
            "auth": auth.agent_auth_capabilities(),
            "_meta": {"claudeCode": {"promptQueueing": True}, "elelem": {"steering": True}},
        },
        "agentInfo": {"name": "elelem", "title": "elelem", "version": __version__},
        "authMethods": auth.auth_methods(client),
    }


def booleans(client: dict[str, Any]) -> bool:
    """Whether the client takes boolean config options
    (`clientCapabilities.session.configOptions.boolean`)."""
    session = client.get("session")
    options = session.get("configOptions") if isinstance(session, dict) else None
    return isinstance(options, dict) and isinstance(options.get("boolean"), dict)
