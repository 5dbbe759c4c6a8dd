"""Skills (builtins/skills.py): `.agents/skills/NAME/SKILL.md` of a trusted folder and
`~/.agents/skills/`, listed in the system prompt, read with the `skill` tool, listed by
`/skills`; every file hostile and bounded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elelem_daemon.builtins import skills
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

SKILL = """---
name: release-notes
description: Write release notes from the git log
license: MIT
---
Run `git log --oneline` since the last tag, then group the changes.
"""


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".state"))
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    return home


def skill(folder: Path, name: str, text: str = SKILL) -> Path:
    where = folder / ".agents" / "skills" / name
    where.mkdir(parents=True)
    (where / "SKILL.md").write_text(text)
    return where


def session(project: bool = True):
    return start(core_registry(entry_points=False), plugin_files=False, project=project)


async def test_a_trusted_folders_skill_is_offered_and_read(tmp_path: Path) -> None:
    where = skill(Path.cwd(), "release-notes")
    (where / "template.md").write_text("## Changes\n")
    s = session()
    prompt = s.context[0]["content"]
    assert "- release-notes: Write release notes from the git log" in prompt
    assert "skill" in s.toolbox
    body = await s.toolbox.run("skill", {"name": "release-notes"})
    assert body.ok and body.payload["content"].startswith("Run `git log --oneline`")
    assert body.payload["files"] == ["template.md"]
    one = await s.toolbox.run("skill", {"name": "release-notes", "file": "template.md"})
    assert one.payload["content"] == "## Changes\n"
    listed = await s.command("/skills")
    assert "release-notes (project): Write release notes" in listed.output


async def test_an_untrusted_folders_skill_is_neither_offered_nor_listed() -> None:
    skill(Path.cwd(), "release-notes")
    s = session(project=False)
    assert "release-notes" not in s.context[0]["content"]
    assert "skill" not in s.toolbox
    listed = (await s.command("/skills")).output
    assert "release-notes (" not in listed and "not trusted" in listed


async def test_the_users_skills_load_everywhere_and_the_project_replaces_one(home: Path) -> None:
    skill(home, "release-notes", SKILL.replace("Write release", "Mine: write release"))
    skill(home, "mine", "---\ndescription: >\n  folded over\n  two lines\n---\nbody\n")
    alone = session(project=False)
    assert "- mine: folded over two lines" in alone.context[0]["content"]
    assert "Mine: write release" in alone.context[0]["content"]
    skill(Path.cwd(), "release-notes")
    both = session()
    prompt = both.context[0]["content"]
    assert "Mine: write release" not in prompt and "- release-notes: Write release" in prompt
    assert prompt.index("- mine:") < prompt.index("- release-notes:")  # sorted: stable


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("no front matter", "no front matter"),
        ("---\nname: x\n---\nbody", "no description"),
        ("---\nname: Bad Name\ndescription: d\n---\n", "lower-case"),
        ("---\ndescription: a\x1b[2Jb\n---\n", "control characters"),
        ("---\ndescription: " + "d" * 2000 + "\n---\n", "at most 1024"),
        ("---\ndescription: d\n---\n" + "x" * (skills.MAX_BYTES + 1), "larger than"),
        (b"---\ndescription: \xff\n---\n", "not UTF-8"),
    ],
)
async def test_a_bad_skill_is_left_out_with_why(text: str | bytes, why: str) -> None:
    where = Path.cwd() / ".agents" / "skills" / "bad"
    where.mkdir(parents=True)
    if isinstance(text, bytes):
        (where / "SKILL.md").write_bytes(text)
    else:
        (where / "SKILL.md").write_text(text)
    skill(Path.cwd(), "good", "---\ndescription: fine\n---\n")
    s = session()
    listed = s.context[0]["content"].partition("\nSkills:")[2]  # the environment names the folder
    assert "- good: fine" in listed and "bad" not in listed
    assert why in (await s.command("/skills")).output


async def test_links_and_escapes_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2")
    where = skill(Path.cwd(), "release-notes")
    os.symlink(secret, where / "linked.md")
    os.link(secret, where / "hard.md")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\ndescription: planted\n---\n")
    os.symlink(outside, Path.cwd() / ".agents" / "skills" / "planted")
    s = session()
    assert "planted" not in s.context[0]["content"]
    for file in ("linked.md", "hard.md", "../../../../secret.txt", str(secret)):
        result = await s.toolbox.run("skill", {"name": "release-notes", "file": file})
        assert not result.ok and "hunter2" not in str(result.payload), file
    listing = await s.toolbox.run("skill", {"name": "release-notes"})
    assert "linked.md" not in listing.payload["files"]
    unknown = await s.toolbox.run("skill", {"name": "nope"})
    assert unknown.payload["error"] == "no skill named 'nope'. Skills: release-notes"


async def test_too_many_skills_are_cut_with_a_problem() -> None:
    folder = Path.cwd() / ".agents" / "skills"
    for n in range(skills.MAX_SKILLS + 5):
        skill(Path.cwd(), f"s{n:03d}", "---\ndescription: d\n---\n")
    s = session()
    assert s.context[0]["content"].count("\n- s") == skills.MAX_SKILLS
    assert f"{folder}: {skills.MAX_SKILLS + 5} entries" in (await s.command("/skills")).output


def test_no_skills_no_tool_and_no_prompt_text() -> None:
    s = session()
    assert "skill" not in s.toolbox and "Skills:" not in s.context[0]["content"]
