"""Built-in command `/init`: a turn that asks the model to study the repository and
write (or improve) its AGENTS.md.

It is an ordinary, kept turn in the mode on, with INIT_PROMPT (and the user's words
after `/init`, if any) as its prompt, so its tool calls stream as any turn's do. The
write itself gets no door of its own: AGENTS.md is a protected path (protected.py), so
the permission policy asks the user before any tool writes it, with no rule or
`always` answer able to let it through unasked (docs/permissions.md); in an editor
that reviews changes, the proposed file is shown first.
"""

from __future__ import annotations

from ..ports import SessionView
from ..registry import Plugin

INIT_PROMPT = """Write AGENTS.md for this repository: the file coding agents read first.
Study the tree first (list, glob, read the README, the build and package files, CI
configuration, a few representative sources and tests). Then write a short, exact
AGENTS.md: what the project is, how to set it up, build, lint and run its tests (the
exact commands, one test file too), where things live, and the conventions the code
follows (style, naming, commit messages). If AGENTS.md exists, improve it: keep what
is right, fix what is stale, add what is missing. Write it with the write tool (the
user is asked before it lands), then say in two lines what you wrote."""


def prompt(args: str | None) -> str:
    """The /init turn's prompt: INIT_PROMPT, then the user's own words, if any."""
    extra = (args or "").strip()
    return f"{INIT_PROMPT}\n\nThe user adds: {extra}" if extra else INIT_PROMPT


def register(plugin: Plugin) -> None:
    @plugin.command("init", "Write or improve AGENTS.md for this repository")
    async def init(session: SessionView, args: str | None) -> None:
        await session.turn(prompt(args))
