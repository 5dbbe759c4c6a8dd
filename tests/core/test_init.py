"""`/init`: a kept turn with the AGENTS.md prompt, whose write of AGENTS.md (a protected
path) is asked about, never landed silently."""

from __future__ import annotations

from pathlib import Path

from support.outputs import Scripted, SpyOutput

from elelem_daemon.builtins.init import INIT_PROMPT
from elelem_daemon.io import NullInput
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

WRITE = {
    "type": "doing",
    "id": "w1",
    "name": "write",
    "arguments": {"path": "AGENTS.md", "content": "# Agents\n\nRun `make test`.\n"},
}


class Asking(NullInput):
    def __init__(self, answers) -> None:
        super().__init__(answers)
        self.asked: list[tuple[str, dict]] = []

    async def ask(self, prompt, options=None, **details):
        self.asked.append((prompt, details))
        return await super().ask(prompt, options, **details)


def opened(workdir: Path, answers: list[str]) -> tuple:
    asking, output = Asking(answers), SpyOutput()
    session = start(core_registry(entry_points=False), cwd=workdir, input=asking, output=output)
    session.provider = Scripted(
        [{"type": "saying", "text": "looking"}, {"type": "doing", "id": "l1", "name": "list",
         "arguments": {}}],
        [{"type": "saying", "text": "writing"}, WRITE],
        [{"type": "saying", "text": "wrote AGENTS.md"}],
    )  # fmt: skip
    return session, asking, output


async def test_init_runs_a_kept_turn_and_asks_before_writing_agents_md(workdir: Path) -> None:
    (workdir / "AGENTS.md").write_text("old\n")
    session, asking, output = opened(workdir, ["deny"])
    result = await session.command("/init")
    assert "error" not in result.output
    first = session.provider.requests[0][0]
    assert first[-1]["content"] == INIT_PROMPT  # the turn's prompt
    assert [m["role"] for m in session.conversation] == ["user", "assistant"]
    assert session.conversation[-1]["content"] == "wrote AGENTS.md"
    ((question, details),) = asking.asked
    assert details["kind"] == "permission" and details["tool"]["name"] == "write"
    assert "AGENTS.md" in question
    write = [r for r in output.of("result") if r.get("path") == "AGENTS.md" or "error" in r][-1]
    assert write["ok"] is False and "denied" in write["error"]
    assert (workdir / "AGENTS.md").read_text() == "old\n"  # nothing landed unasked
    await session.close()


async def test_init_writes_agents_md_once_the_user_allows_it(workdir: Path) -> None:
    session, asking, _ = opened(workdir, ["allow"])
    await session.command("/init also mention the docs folder")
    assert session.provider.requests[0][0][-1]["content"].endswith(
        "The user adds: also mention the docs folder"
    )
    assert len(asking.asked) == 1
    assert (workdir / "AGENTS.md").read_text().startswith("# Agents")
    await session.close()


async def test_init_in_plan_mode_proposes_and_writes_nothing(workdir: Path) -> None:
    session, asking, output = opened(workdir, ["allow"])
    session.modes.set("plan")
    await session.command("/init")
    assert not asking.asked and not (workdir / "AGENTS.md").exists()
    assert any("not allowed in plan mode" in r.get("error", "") for r in output.of("result"))
    await session.close()
