"""What changed outside the agent since a checkpoint (the user's edits, another
session's turns) is told apart from what the agent did, and reported before a restore."""

from __future__ import annotations

from pathlib import Path

from elelem_daemon.checkpoints import Checkpoints, Settings


async def turn(checkpoints: Checkpoints, session: str, number: int, *writes: tuple) -> None:
    assert (await checkpoints.begin(session, number)).ok
    for path, text in writes:
        path.write_text(text)
    assert (await checkpoints.end(session, number)).ok


async def test_the_agents_own_changes_are_not_outside(project: Path, settings: Settings) -> None:
    (project / "f").write_text("1\n")
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, "s", 1, (project / "f", "agent\n"), (project / "g", "new\n"))
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.restored == ["f"] and plan.deleted == ["g"]
    assert plan.outside == []


async def test_the_users_edits_after_the_turn_are_reported(
    project: Path, settings: Settings
) -> None:
    (project / "f").write_text("1\n")
    (project / "mine").write_text("mine\n")
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, "s", 1, (project / "f", "agent\n"))
    (project / "f").write_text("agent, then the user\n")
    (project / "mine").write_text("edited by the user\n")
    (project / "made").write_text("made by the user\n")
    plan = await checkpoints.restore("s", 1, dry_run=True)
    assert plan.outside == ["f", "made", "mine"]
    done = await checkpoints.restore("s", 1)
    assert done.outside == ["f", "made", "mine"]
    assert (project / "mine").read_text() == "mine\n"


async def test_edits_between_turns_are_reported_for_the_earlier_checkpoint(
    project: Path, settings: Settings
) -> None:
    (project / "f").write_text("1\n")
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, "s", 1, (project / "f", "turn 1\n"))
    (project / "between").write_text("the user, between turns\n")
    await turn(checkpoints, "s", 2, (project / "k", "turn 2\n"))
    assert (await checkpoints.restore("s", 2, dry_run=True)).outside == []
    assert (await checkpoints.restore("s", 1, dry_run=True)).outside == ["between"]


async def test_another_sessions_turn_is_outside_this_one(project: Path, settings: Settings) -> None:
    checkpoints = Checkpoints(project, settings)
    await turn(checkpoints, "a", 1, (project / "from-a", "a\n"))
    await turn(checkpoints, "b", 1, (project / "from-b", "b\n"))
    await turn(checkpoints, "a", 2, (project / "from-a", "a again\n"))
    plan = await checkpoints.restore("a", 1, dry_run=True)
    assert plan.deleted == ["from-a", "from-b"]
    assert plan.outside == ["from-b"]
    assert (await checkpoints.restore("b", 1, dry_run=True)).outside == ["from-a"]
