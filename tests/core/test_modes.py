"""Modes in the core: the built-in ones, the refusal of what a mode does not allow, the
tools the model is offered, mode files (bounded, trusted folders only) and the door."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elelem_daemon.base.errors import UnknownMode
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start
from elelem_daemon.store.store import Store


def script(*calls) -> str:
    return "!tools " + json.dumps([list(c) for c in calls])


def results(output) -> list:
    return [args for kind, args in output.calls if kind == "result"]


class Recording:
    """A provider that records the tools it was offered, then ends the turn."""

    name = "recording"

    def __init__(self, model=None) -> None:
        self.model = "m"
        self.offered: list[list[str]] = []

    async def fetch(self, messages, tools):
        self.offered.append(
            [t["function"]["name"] if "function" in t else t["name"] for t in tools]
        )
        yield {"type": "saying", "text": "ok"}


def test_the_built_in_modes_and_build_first(session) -> None:
    shown = session.modes.to_dict()
    assert shown["current"] == "build"
    assert [m["id"] for m in shown["available"]] == ["build", "plan", "review", "verify"]
    assert all(m["name"] and m["description"] for m in shown["available"])


async def test_plan_mode_refuses_write_edit_execute_and_still_reads_and_searches(
    session, output, workdir: Path
) -> None:
    session.modes.set("plan")
    (workdir / "a.txt").write_text("needle\n")
    await session.turn(
        script(
            ("write", {"path": "new.txt", "content": "x"}),
            ("edit", {"path": "a.txt", "old": "needle", "new": "pin"}),
            ("execute", {"command": "touch ran"}),
            ("read", {"path": "a.txt"}),
            ("grep", {"pattern": "needle"}),
        )
    )
    write, edit, execute, read, grep = results(output)
    for refused, name in ((write, "write"), (edit, "edit"), (execute, "execute")):
        assert refused["ok"] is False
        assert f"{name} is not allowed in plan mode" in refused["error"]
    assert not (workdir / "new.txt").exists() and not (workdir / "ran").exists()
    assert (workdir / "a.txt").read_text() == "needle\n"
    assert read["ok"] and "needle" in read["content"]
    assert grep["ok"] and "needle" in grep["content"]


async def test_the_mode_filters_the_tools_offered_at_the_next_request(workdir: Path) -> None:
    provider = Recording()
    registry = core_registry(entry_points=False).child()
    registry.plugin("test").provider("recording", lambda model=None: provider)
    session = start(registry, "recording", cwd=workdir, plugin_files=False)
    await session.turn("hi")
    session.modes.set("plan")
    await session.turn("again")
    build, plan = provider.offered
    assert {"write", "edit", "execute"} <= set(build)
    assert not {"write", "edit", "execute"} & set(plan)
    assert {"read", "grep", "glob", "list", "todo"} <= set(plan)
    assert "plan mode" in session.context[0]["content"]  # the mode's prompt


def test_an_unknown_mode_is_refused_with_the_ones_there_are(session) -> None:
    with pytest.raises(UnknownMode) as raised:
        session.modes.set("nope")
    assert raised.value.data["modes"] == ["build", "plan", "review", "verify"]
    assert session.modes.current.id == "build"


async def test_the_mode_command_lists_and_switches(session) -> None:
    listed = await session.command("/mode")
    assert listed.output.splitlines()[0].startswith("* build")
    switched = await session.command("/mode plan")
    assert switched.output == "  → mode: plan" and session.modes.current.id == "plan"
    bad = await session.command("/mode nope")
    assert bad.output.startswith('error: unknown mode: "nope"')
    assert session.modes.current.id == "plan"


MODE_FILE = """---
description: Explain the code, change nothing
tools: read, grep
---
You explain how the code works.
"""


def mode_folder(root: Path) -> Path:
    folder = root / ".agents" / "modes"
    folder.mkdir(parents=True)
    return folder


async def test_a_project_mode_file_appears_and_works_in_a_trusted_folder(
    workdir: Path, output
) -> None:
    (mode_folder(workdir) / "explain.md").write_text(MODE_FILE)
    session = start(core_registry(entry_points=False), cwd=workdir, output=output, project=True)
    assert "explain" in session.modes.ids()
    session.modes.set("explain")
    assert "You explain how the code works." in session.context[0]["content"]
    await session.turn(script(("glob", {"pattern": "*.md"}), ("read", {"path": "README.md"})))
    glob, read = results(output)
    assert not glob["ok"] and "glob is not allowed in explain mode" in glob["error"]
    assert read["ok"]


def test_a_project_mode_file_is_skipped_in_an_untrusted_folder(workdir: Path) -> None:
    (mode_folder(workdir) / "explain.md").write_text(MODE_FILE)
    session = start(core_registry(entry_points=False), cwd=workdir, project=False)
    assert "explain" not in session.modes.ids()
    assert any(".agents/modes" in str(p) for p in session.trust.skipped)


def test_the_users_mode_files_load_in_any_folder(workdir: Path, isolated_home: Path) -> None:
    (mode_folder(isolated_home) / "mine.md").write_text(MODE_FILE)
    session = start(core_registry(entry_points=False), cwd=workdir, project=False)
    assert "mine" in session.modes.ids()


def test_bad_mode_files_are_reported_not_fatal(workdir: Path) -> None:
    folder = mode_folder(workdir)
    (folder / "Bad Name.md").write_text(MODE_FILE)
    (folder / "nofront.md").write_text("just a prompt\n")
    (folder / "unclosed.md").write_text("---\ndescription: x\n")
    (folder / "badkey.md").write_text("---\nrun: rm -rf /\n---\nx\n")
    (folder / "huge.md").write_text("---\ndescription: x\n---\n" + "x" * 20_000)
    (folder / "binary.md").write_bytes(b"---\ndescription: \xff\xfe\n---\n")
    (folder / "link.md").symlink_to(workdir / "README.md")
    (folder / "good.md").write_text(MODE_FILE)
    session = start(core_registry(entry_points=False), cwd=workdir, project=True)
    assert session.modes.ids() == ["build", "plan", "review", "verify", "good"]
    problems = "\n".join(session.modes.to_dict()["problems"])
    for name in ("Bad Name", "nofront", "unclosed", "badkey", "huge", "binary", "link"):
        assert f"{name}.md" in problems


def test_too_many_mode_files_are_bounded(workdir: Path) -> None:
    folder = mode_folder(workdir)
    for n in range(40):
        (folder / f"m{n:02d}.md").write_text(MODE_FILE)
    session = start(core_registry(entry_points=False), cwd=workdir, project=True)
    assert len(session.modes.ids()) == 4 + 32
    assert any("only the first 32" in p for p in session.modes.problems)


def test_a_plugin_adds_a_mode_through_the_door(workdir: Path) -> None:
    registry = core_registry(entry_points=False).child()
    registry.plugin("mine", "user").mode(
        "docs", "Docs", "Write docs only", "Docs only.", ["read", "write"]
    )
    session = start(registry, cwd=workdir, plugin_files=False)
    assert session.modes.get("docs").source == "plugin"
    with pytest.raises(ValueError):
        registry.plugin("bad").mode("Not An Id")


async def test_the_mode_is_stored_and_restored_on_resume(workdir: Path) -> None:
    store = Store()
    registry = core_registry(entry_points=False)
    session = start(registry, cwd=workdir, store=store)
    session.modes.set("review")
    await session.turn("!echo hi")
    session.modes.set("plan")
    await session.close()
    from elelem_daemon.session import resume

    again = resume(registry, store, store.load(session.id))
    assert again.modes.current.id == "plan"
    await again.close()


async def test_a_mode_set_before_the_first_message_is_stored_with_it(workdir: Path) -> None:
    store = Store()
    registry = core_registry(entry_points=False)
    session = start(registry, cwd=workdir, store=store)
    session.modes.set("verify")
    await session.turn("!echo hi")
    await session.close()
    assert store.load(session.id).mode == "verify"


async def test_a_reload_keeps_the_mode_or_falls_back_to_build(workdir: Path) -> None:
    folder = mode_folder(workdir)
    (folder / "explain.md").write_text(MODE_FILE)
    session = start(core_registry(entry_points=False), cwd=workdir, project=True)
    heard = []
    session.modes.listeners.append(lambda mode: heard.append(mode.id))
    session.modes.set("plan")
    session.reload()
    assert session.modes.current.id == "plan" and heard == ["plan"]
    session.modes.set("explain")
    (folder / "explain.md").unlink()
    session.reload()
    assert session.modes.current.id == "build" and heard == ["plan", "explain", "build"]


async def test_review_mode_puts_the_working_tree_diff_in_the_prompt(workdir: Path) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=workdir, check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.email=a@b", "-c", "user.name=a", "add", "README.md")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one")
    (workdir / "README.md").write_text("# My project\nchanged line\n")
    provider = Recording()
    registry = core_registry(entry_points=False).child()
    registry.plugin("test").provider("recording", lambda model=None: provider)
    trusted = start(registry, "recording", cwd=workdir, plugin_files=False, project=True)
    trusted.modes.set("review")
    await trusted.turn("review it")
    prompt = trusted.context[0]["content"]
    assert "review mode" in prompt and "+changed line" in prompt
    untrusted = start(registry, "recording", cwd=workdir, plugin_files=False, project=False)
    untrusted.modes.set("review")
    await untrusted.turn("review it")
    assert "not trusted: no diff" in untrusted.context[0]["content"]
    assert "+changed line" not in untrusted.context[0]["content"]
    untrusted.modes.set("build")
    assert "review mode" not in untrusted.context[0]["content"]
