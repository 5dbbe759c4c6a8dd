"""A deny rule holds in the daemon after the user answered `always` (issue 36): the
15 spellings of `rm -f x` leave the file in place under `execute:rm * deny`; the one
the parser cannot tell (`$(echo rm) -f x`) is asked again, whatever `always` said, and
the question says why (docs/permissions.md, "What a command runs")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.spellings import SPELLINGS

from .conftest import within

pytestmark = pytest.mark.e2e
COMPUTED = "$(echo rm) -f x"


async def test_always_does_not_let_any_spelling_of_a_denied_program_through(
    spawn, env, workdir
) -> None:
    (Path(env["XDG_CONFIG_HOME"]) / "elelem" / "permissions").write_text("execute:rm * deny\n")
    (workdir / "x").write_text("precious\n")
    questions: list[dict] = []

    def answer(params: dict) -> str:
        questions.append(params)
        return "always" if len(questions) == 1 else "deny"

    home = Path(env["HOME"])
    own = {"XDG_DATA_HOME": str(home / ".local/share"), "XDG_CACHE_HOME": str(home / ".cache")}
    client = await spawn(on_ask=answer, env={**env, **own})
    await within(client.initialize())
    session = (await within(client.new_session()))["sessionId"]
    await within(client.turn(session, '!tool execute {"command": "true"}'))
    assert len(questions) == 1  # answered `always`
    calls = [["execute", {"command": command}] for command in SPELLINGS]
    seen: list[dict] = []
    await within(client.turn(session, "!tools " + json.dumps(calls), on_event=seen.append), 120)
    results = [e["params"]["result"] for e in seen if e["method"] == "event/result"]
    assert len(results) == len(SPELLINGS)
    for command, result in zip(SPELLINGS, results, strict=True):
        assert not result["ok"], command
        wanted = "User denied" if command == COMPUTED else "Permission denied: execute"
        assert result["error"].startswith(wanted), (command, result)
    assert (workdir / "x").read_text() == "precious\n"
    (asked,) = questions[1:]  # only the one it cannot tell, despite `always`
    assert asked["prompt"].startswith(f"Allow execute: {COMPUTED}? (a deny rule is set")
    assert asked["options"] == ["allow", "deny", "never"]
