"""Sign-in over ACP (docs/acp.md, "Signing in"), against the real `elelem daemon --acp`:
the `terminal` method only to clients that declare it, `auth_required` when nothing is
set up, a session once `elelem login`'s file is there, and `logout` removing it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from support.acp_probe import acp_initialize

AGENT = [sys.executable, "-m", "elelem_daemon", "daemon", "--acp"]


def env_of(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ELELEM_", "OPENAI", "ANTHROPIC", "OLLAMA", "XDG_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_DATA_HOME=str(home / "data"),
        OLLAMA_HOST="127.0.0.1:1",  # no Ollama to find
    )
    return env


def test_terminal_auth_is_offered_only_to_clients_that_declare_it(tmp_path: Path) -> None:
    env = env_of(tmp_path)
    declared = acp_initialize(AGENT, tmp_path, env, True)
    (method,) = declared["authMethods"]
    assert method["id"] == "elelem-login" and method["type"] == "terminal"
    assert method["args"] == ["--login"]
    assert declared["agentCapabilities"]["auth"] == {"logout": {}}
    assert acp_initialize(AGENT, tmp_path, env, False)["authMethods"] == []


def test_no_provider_is_auth_required_and_a_signin_opens_a_session(tmp_path: Path) -> None:
    env = env_of(tmp_path)
    refused = acp_initialize(AGENT, tmp_path, env, True, new_session=True)["session"]["error"]
    assert refused["code"] == -32000
    assert refused["data"]["kind"] == "auth_required"
    assert [m["id"] for m in refused["data"]["authMethods"]] == ["elelem-login"]
    # a client that cannot run the sign-in gets the stub, as before
    stub = acp_initialize(AGENT, tmp_path, env, False, new_session=True)["session"]
    assert stub.get("sessionId")
    kept = tmp_path / "config" / "elelem" / "credentials.json"
    kept.parent.mkdir(parents=True)
    signed = {"provider": "openai", "env": {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}}
    kept.write_text(json.dumps(signed))
    kept.chmod(0o600)
    opened = acp_initialize(AGENT, tmp_path, env, True, new_session=True)["session"]
    assert opened.get("sessionId"), opened


def test_the_auth_answers_validate_against_every_vendored_schema(tmp_path: Path) -> None:
    """initialize with the terminal method, and the auth_required error, as the schemas
    of ACP 1.21 and of the TypeScript SDK 2.4.0 (stable and unstable) define them."""
    from support.acp_schema import ALL, validator

    env = env_of(tmp_path)
    result = acp_initialize(AGENT, tmp_path, env, True, new_session=True)
    refused = result.pop("session")["error"]
    for name in ALL:
        validator("InitializeResponse", name).validate(result)
        validator("Error", name).validate(refused)
