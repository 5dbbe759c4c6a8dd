"""Built-in modes (modes.py), through the public door (`plugin.mode`): `build` (the
default: every tool), `plan` (read and search only: the model proposes, changes
nothing), `review` (read-only, on the working tree's diff) and `verify` (runs the
project's tests and reports: `execute`, but no `write` or `edit`); the user's mode
files (modefiles.py); the `/mode` command; and the refusal of a call the mode on does
not allow, a global before hook that runs before the permission policy asks anything:
the model reads `{"error": "write is not allowed in plan mode ...", "ok": false}`.
"""

from __future__ import annotations

import logging
from typing import Any

from ..ports import SessionView
from ..registry import Plugin
from ..turns.modes import DEFAULT
from . import modefiles

log = logging.getLogger(__name__)
READ_ONLY = ("kind:read", "kind:search", "kind:think", "todo", "interview")
DIFF_CAP = 24_000  # characters of the working tree's diff in the review prompt
DIFF_TIMEOUT = 10.0

PLAN = """You are in plan mode: study the code and propose a plan; change nothing.
Only tools that read and search run here (read, grep, glob, list); write, edit and
execute are refused. Keep the plan with the todo tool. End with the plan, the files it
touches and the open questions; the user switches to build mode (/mode build) to carry
it out."""
REVIEW = """You are in review mode: review the changes in the working tree, change
nothing. Only tools that read and search run here. Read the changed files around each
hunk; report bugs, risks, missing tests and unclear code, most important first, each
with its file and line; say plainly when the change looks right."""
VERIFY = """You are in verify mode: find how this project runs its tests (AGENTS.md,
README, bin/, Makefile, package files), run them with execute, and report what passed
and what failed, with the failing output. Do not edit or write files: if something
fails, say why and what would fix it."""


async def working_diff(session: SessionView) -> str:
    """The working tree's diff against HEAD, for the review prompt: only in a trusted
    folder (git reads the repository's own config), bounded in time and size."""
    from .shell import run

    if not getattr(session, "project", False):
        return "(The folder is not trusted: no diff was taken. Read the changed files.)"
    argv = ["git", "-c", "core.fsmonitor=false", "-c", "diff.external=", "--no-pager"]
    found = await run(
        [*argv, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "HEAD", "--"],
        session.cwd,
        DIFF_TIMEOUT,
        DIFF_CAP,
    )
    text = str(found.get("content") or found.get("error") or "").strip()
    if found.get("exit_status") not in (0, None) or not text:
        return f"(No diff of the working tree: {text[:300] or 'no changes'}.)"
    return f"The working tree's diff against HEAD:\n\n```diff\n{text}\n```"


def listing(session: SessionView) -> str:
    """`/mode`: the modes, the one on marked `*`, and the problems of mode files."""
    current = session.modes.current.id
    lines = []
    for mode in session.modes.available():
        mark = "*" if mode.id == current else " "
        lines.append(f"{mark} {mode.id.ljust(10)} {mode.description}".rstrip())
    lines += [f"  ! {problem}" for problem in session.modes.problems]
    return "\n".join(lines)


def refusal(tool: str, mode: Any) -> str:
    allowed = "every tool" if mode.tools is None else ", ".join(mode.tools)
    return (
        f"{tool} is not allowed in {mode.id} mode (it allows: {allowed}); "
        f"carry on with the tools it allows, or ask the user to switch with /mode {DEFAULT}"
    )


def register(plugin: Plugin) -> None:
    plugin.mode("build", "Build", "Make the changes asked for, with every tool")
    plugin.mode("plan", "Plan", "Read and search only, and propose a plan", PLAN, READ_ONLY)
    plugin.mode(
        "review", "Review", "Review the working tree's diff, read-only", REVIEW, READ_ONLY,
        working_diff,
    )  # fmt: skip
    plugin.mode(
        "verify", "Verify", "Run the project's tests and report; no edits", VERIFY,
        (*READ_ONLY, "kind:execute"),
    )  # fmt: skip

    @plugin.setup
    def mode_files(session: SessionView) -> None:
        folders = [(modefiles.user_folder(), "user")]
        project = modefiles.project_folder(session.cwd)
        if session.project and project.resolve() != modefiles.user_folder().resolve():
            folders.append((project, "project"))
        for folder, source in folders:
            modes, problems = modefiles.load(folder, source)
            for mode in modes:
                session.modes.add(mode)
            for problem in problems:
                log.warning("modes: %s", problem)
            session.modes.problems += problems

    @plugin.before()
    def allowed(session: SessionView, args: dict[str, Any], tool_name: str) -> None:
        mode = session.modes.current
        if not mode.allows(session.toolbox.resolve(tool_name)):
            raise PermissionError(refusal(tool_name, mode))

    @plugin.on("turn_start")
    async def prepare(session: SessionView, turn_id: int) -> None:
        await session.modes.prepare(session)

    @plugin.command("mode", "Show or switch the mode", lambda s: lambda: s.modes.ids())
    def mode(session: SessionView, args: str | None) -> None:
        if not args:
            session.output.say(listing(session))
            return
        session.modes.set(args.strip())
        session.output.say(f"  → mode: {session.modes.current.id}")
