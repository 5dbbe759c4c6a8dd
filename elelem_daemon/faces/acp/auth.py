"""The ACP face's sign-in seam: what `initialize` offers (`authMethods`), and the
`authenticate` and `logout` methods.

One home for the face's authentication: `auth_methods` is what `initialize` answers,
from the client's capabilities (a `terminal` method only to a client that declares
`auth.terminal`); `authenticate` and `logout` answer those requests. Providers read
their keys from the environment for now, so no method is offered yet and `logout`
has nothing to forget (issue 38: `elelem login` fills this in).
"""

from __future__ import annotations

from typing import Any

from ...jsonrpc.errors import invalid_params


def auth_methods(client_capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    """The `authMethods` of `initialize`'s answer for a client with these capabilities."""
    return []


def agent_auth_capabilities() -> dict[str, Any]:
    """`agentCapabilities.auth`: `logout` is served."""
    return {"logout": {}}


async def authenticate(params: dict[str, Any]) -> dict[str, Any]:
    """No method is offered: providers read their keys from the environment."""
    raise invalid_params(
        "elelem offers no authentication methods; set the provider's key "
        "in the environment (see docs/acp.md)"
    )


async def logout(params: dict[str, Any]) -> dict[str, Any]:
    """Forget the stored sign-in (none is kept yet: keys come from the environment)."""
    return {}
