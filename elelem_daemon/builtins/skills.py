"""Skills: instructions the model reads when a task matches them, as elelem's
`elelem-skills` gem and Claude Code's `SKILL.md` folders have them (docs/plugins.md,
"Skills").

A skill is a folder `NAME/` holding a `SKILL.md`: front matter between `---` lines
(`name`, `description`; other keys such as `license` or `allowed-tools` are read and
ignored), then the body, the instructions. Sources, in order: the user's
`~/.agents/skills/`, then, in a trusted folder only (trust.py), the project's
`.agents/skills/`, whose skills replace the user's of the same name.

The model sees every skill's name and description in the system prompt (sorted, so the
prompt's prefix stays byte-stable) and reads one with the `skill` tool when it chooses
to: the body and the names of the other files in its folder; `file` reads one of them.
`/skills` lists them, with any skill left out and why.

Every file is hostile and bounded: at most MAX_SKILLS skills per folder, a SKILL.md of
at most MAX_BYTES and a description of at most DESCRIPTION_CAP characters with no
control characters, a name of lower-case letters, digits and `-` (64 at most); a skill
folder that is a symlink is skipped; a file is opened only as a plain file with one
link (owned.py: no symlink, FIFO or device), inside its skill's folder, at most
FILE_CAP bytes of UTF-8; at most MAX_FILES names are listed.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ports import SessionView
from ..registry import Plugin
from ..safety import vetted
from .modefiles import front_matter, listed, read

log = logging.getLogger(__name__)

MAX_SKILLS = 100
MAX_BYTES = 64 * 1024
FILE_CAP = 256 * 1024
MAX_FILES = 200
DESCRIPTION_CAP = 1024
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
TOOL = "skill"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    source: str  # "user" or "project"


@dataclass(frozen=True)
class Found:
    """A session's skills by name, and the problems of those left out (`session.skills`)."""

    skills: dict[str, Skill]
    problems: list[str]


def of(session: SessionView) -> Found:
    return session.skills if isinstance(session.skills, Found) else Found({}, [])


def user_folder() -> Path:
    return Path.home() / ".agents" / "skills"


def project_folder(cwd: Path) -> Path:
    return Path(cwd) / ".agents" / "skills"


def load(folder: Path, source: str) -> tuple[list[Skill], list[str]]:
    """The skills of one folder, and a problem per skill left out."""
    names, problems = listed(folder, MAX_SKILLS, "skills")
    skills = []
    record = vetted.load() if source == "user" else None
    for name in names:
        where = folder / name
        if not (where / "SKILL.md").exists() and not os.path.islink(where):
            continue  # not a skill folder (a README, a stray file)
        if record is not None and not vetted.approved_tree(where, record):
            problems.append(f"{where}: {vetted.PROBLEM}")
            continue
        try:
            skills.append(parse(where, source))
        except (OSError, ValueError) as exc:
            problems.append(f"{where}: {exc}; skipped")
    return skills, problems


def parse(folder: Path, source: str) -> Skill:
    """One skill folder's SKILL.md; ValueError says what is wrong."""
    if os.path.islink(folder):
        raise ValueError("a symlink: a skill's folder must be a real folder")
    fields, _body = front_matter(read(folder / "SKILL.md", MAX_BYTES), keys=None)
    name = fields.get("name") or folder.name
    if not NAME.fullmatch(name):
        raise ValueError("a skill's name is lower-case letters, digits and - (64 at most)")
    description = fields.get("description", "").strip()
    if not description:
        raise ValueError("no description: the model chooses a skill by its description")
    if len(description) > DESCRIPTION_CAP or CONTROLS.search(description):
        raise ValueError(
            f"a description is at most {DESCRIPTION_CAP} characters, without control characters"
        )
    return Skill(name, description, folder, source)


def found(session: SessionView) -> Found:
    """The session's skills by name (the project's replacing the user's), and problems."""
    folders = [(user_folder(), "user")]
    project = project_folder(session.cwd)
    if session.project and project.resolve() != user_folder().resolve():
        folders.append((project, "project"))
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for folder, source in folders:
        more, bad = load(folder, source)
        skills.update((skill.name, skill) for skill in more)
        problems += bad
    return Found(dict(sorted(skills.items())), problems)


def section(skills: dict[str, Skill]) -> str:
    """What the system prompt says of the skills: stable while they are."""
    if not skills:
        return ""
    listed = "\n".join(f"- {s.name}: {s.description}" for s in skills.values())
    return (
        "Skills: instructions for particular tasks. When a task matches a skill's "
        f"description, read the skill with the `{TOOL}` tool first and follow it.\n{listed}"
    )


def files_of(folder: Path) -> list[str]:
    """The other files of a skill's folder (relative names, no links followed)."""
    names: list[str] = []
    for root, dirs, files in os.walk(folder):  # os.walk follows no symlinked folder
        dirs.sort()
        for file in sorted(files):
            path = Path(root) / file
            if path.is_symlink() or path == folder / "SKILL.md":
                continue
            names.append(path.relative_to(folder).as_posix())
            if len(names) >= MAX_FILES:
                return names
    return names


def read_skill(skill: Skill, file: str | None) -> dict[str, Any]:
    """The `skill` tool's answer: the body and the folder's files, or one file."""
    if file is None:
        _fields, body = front_matter(read(skill.folder / "SKILL.md", MAX_BYTES), keys=None)
        return {"name": skill.name, "content": body.strip(), "files": files_of(skill.folder)}
    relative = Path(file)
    target = (skill.folder / relative).resolve()
    if relative.is_absolute() or not target.is_relative_to(skill.folder.resolve()):
        raise ValueError(f"{file}: outside the skill's folder")
    return {"name": skill.name, "file": file, "content": read(skill.folder / relative, FILE_CAP)}


def register(plugin: Plugin) -> None:
    @plugin.setup
    def skills(session: SessionView) -> None:
        """(Re)read the skills; the `skill` tool exists while there is one."""
        first = not isinstance(session.skills, Found)
        session.skills = now = found(session)
        for problem in now.problems:
            log.warning("skills: %s", problem)
        if first:  # one section, which reads the skills of the moment
            session.system_prompt.sections.append(lambda: section(of(session).skills))
        if not now.skills:
            session.toolbox.remove(TOOL)
            return

        async def run(args: dict[str, Any]) -> dict[str, Any]:
            known = of(session).skills
            skill = known.get(args["name"])
            if skill is None:
                listed = ", ".join(known) or "none"
                raise ValueError(f"no skill named {args['name']!r}. Skills: {listed}")
            return read_skill(skill, args.get("file"))

        session.toolbox.add(
            TOOL,
            "Read a skill (its instructions, and the names of its other files), or one of "
            "its files with `file`",
            {
                "name": {"type": "string", "description": "the skill's name"},
                "file": {"type": "string", "description": "a file of the skill's folder"},
            },
            ["name"],
            handler=run,
            kind="read",
        )

    @plugin.command("skills", "List the skills the model can read")
    def list_skills(session: SessionView, args: str | None) -> None:
        now = of(session)
        lines = [f"- {s.name} ({s.source}): {s.description}" for s in now.skills.values()]
        if not lines:
            lines = [
                "No skills. Add a folder with a SKILL.md to ~/.agents/skills/ or the "
                "project's .agents/skills/ (docs/plugins.md, Skills)."
            ]
        lines += [f"- left out: {p}" for p in now.problems]
        project = project_folder(session.cwd)
        if not session.project and project.is_dir() and any(project.iterdir()):
            lines.append(
                f"- {project}: not loaded, the folder is not trusted "
                "(docs/permissions.md, Trusted folders)"
            )
        session.output.say("\n".join(lines))
