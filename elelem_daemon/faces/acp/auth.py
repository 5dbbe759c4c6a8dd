"""The ACP face's sign-in: what `initialize` offers (`authMethods`), `auth_required`, and
the `authenticate` and `logout` methods. One home for the face's authentication.

elelem's sign-in is `elelem login` (faces/terminal/login.py, kept by base/signin.py).
A client that can run the agent in a terminal (`clientCapabilities.auth.terminal`, or
the older `_meta["terminal-auth"]` that the ACP Registry's own check sends) is offered
one method, `elelem-login`, of type `terminal`: the client runs the agent's command with
`--login` (appended to the configured command, as the schema says, or in place of its
arguments, as the registry's AUTHENTICATION.md says: both run the sign-in), and a zero
exit means signed in. Other clients are offered nothing, as the schema asks.

A new session that would get no provider at all (nothing in the environment, no
sign-in, no `-p`) is answered `auth_required` (-32000, ACP's "authentication
required") with the methods in `data.authMethods`, for a client that declared terminal
auth; so is one whose provider cannot start without its key (ProviderError).
"""

from __future__ import annotations

from typing import Any

from ...jsonrpc.errors import OTHER, RpcError, invalid_params

METHOD_ID = "elelem-login"


def terminal_auth(client: dict[str, Any]) -> bool:
    """Whether the client can run the agent in a terminal to sign in."""
    auth = client.get("auth")
    meta = client.get("_meta")
    return (isinstance(auth, dict) and auth.get("terminal") is True) or (
        isinstance(meta, dict) and bool(meta.get("terminal-auth"))
    )


def auth_methods(client: dict[str, Any]) -> list[dict[str, Any]]:
    """The `authMethods` of `initialize`'s answer for a client with these capabilities."""
    if not terminal_auth(client):
        return []
    return [
        {
            "id": METHOD_ID,
            "name": "Sign in",
            "description": "Choose a model provider (Anthropic, OpenAI, any OpenAI-compatible "
            "server, Ollama, a local model) and check its key: `elelem login`",
            "type": "terminal",
            "args": ["--login"],
            "env": {},
            # the older form some clients read (command + args, run as is)
            "_meta": {
                "terminal-auth": {"command": "elelem", "args": ["login"], "label": "elelem login"}
            },
        }
    ]


def agent_auth_capabilities() -> dict[str, Any]:
    """`agentCapabilities.auth`: `logout` is served."""
    return {"logout": {}}


def auth_required(client: dict[str, Any], why: str) -> RpcError:
    """The error a request gets when elelem has no provider to answer with."""
    return RpcError(
        OTHER,
        f"Authentication required: {why}. Sign in with `elelem login`.",
        {"kind": "auth_required", "authMethods": auth_methods(client)},
    )


def no_provider_chosen(face_provider: str | None, chosen: str) -> bool:
    """Whether the stub was chosen only because nothing else is configured."""
    from ...base import keys

    return chosen == "stub" and not face_provider and not keys.environ().get("ELELEM_PROVIDER")


def authenticate(client: dict[str, Any], method: Any, provider: str, face: str | None) -> dict:
    """The only method is a `terminal` one, which clients run themselves and never pass
    here; asked anyway, say whether a provider is there now (`provider`: the one a new
    session would get; `face`: the face's `-p`)."""
    if not isinstance(method, str) or method not in {m["id"] for m in auth_methods(client)}:
        raise invalid_params(f"methodId: unknown method {str(method)[:80]!r}")
    if no_provider_chosen(face, provider):
        raise auth_required(client, "no model provider is set up")
    return {}


async def logout(params: dict[str, Any]) -> dict[str, Any]:
    """Forget `elelem login`'s sign-in (keys in the environment are the user's own)."""
    from ...base import signin

    signin.forget()
    return {}
