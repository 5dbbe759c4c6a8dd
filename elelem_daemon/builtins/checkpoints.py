"""Built-in checkpoints: every turn that changes files can be undone, as a plugin.

Through the public Plugin API only (docs/checkpoints.md, "Wiring"):

- `on("turn_start")`: the turn is marked running in its folder (restores wait);
- a global `before` hook: before the turn's first tool call that can change files
  (any kind but `read`, `search`, `think`, `fetch`) the checkpoint is taken
  (`Checkpoints.begin`); before each `write` or `edit`, `before_write` keeps the file
  where git cannot (the copy fallback). A turn that only talks, reads or searches
  costs nothing, and what the user edits while the model thinks stays theirs;
- `on("turn_end")`: the end snapshot (`end`) with the texts the turn left through the
  editor (`session.seen.applied`: a buffer not saved yet is what the agent left), even
  for a failed or cancelled turn,
  before the turn answers: taken later, it would count the user's first edits after
  the turn as the agent's, and a rewind would overwrite them without a word;
- `on("close")`: the folder's upkeep (a `git gc`) stops with its last session;
- `on("delete")`: a deleted session's checkpoints go;
- `/undo` and `/rewind [N]` (the core's `rewind.py` does the rewinding; these show
  the plan and ask first, `kind: "confirm"`).

`session.checkpoints` is this plugin's `TurnCheckpoints`: the `ports.Checkpointer`
the core's rewind and the faces' requests use. A failed checkpoint is said once per
session (an `info` line, in every face), and so are unreadable settings. Once per
process the shadows of folders unused for `ELELEM_CHECKPOINTS_DAYS` (or gone) are
removed, in the background.

The engine (the `checkpoints` package, git's wiring) is imported when a session first
needs it: its first tool call that can change files, a rewind, a list of its
checkpoints, a deleted session's. A session's setup reads only the settings
(`checkpoints.settings`), and a turn is marked running in its folder with
`checkpoints.running` alone (the engine shares the folder's `Running`), so nothing of
it is on the path to a session's first answer, nor in a turn that only talks, reads or
searches (`elelem ask` with a question).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.errors import CheckpointFailed, NoCheckpoint, OutsideChanges
from ..checkpoints.settings import Settings
from ..control.rewind import NOTHING, Rewound, last_turn, numbered, rewind, turns
from ..control.told import describe
from ..io import ask
from ..ports import SessionView
from ..registry import Plugin
from .files import resolve

if TYPE_CHECKING:
    from ..checkpoints import Checkpoints, Restored, Saved
    from ..checkpoints.running import Running

log = logging.getLogger(__name__)

READ_ONLY = frozenset({"read", "search", "think", "fetch"})  # kinds that change no file
FILE_TOOLS = ("write", "edit")
CONFIRM = ["yes", "no"]
ASKED = 3  # questions of one /undo, when the files change while it is open
_users: dict[Running, int] = {}  # open sessions per folder, to stop its upkeep last
_engines: dict[Running, set[Checkpoints]] = {}  # the folder's engine, once one is made
_swept: list[asyncio.Task[Any]] = []  # the start-up sweep of stale folders (once)


def shape(done: Restored, turn: int | None) -> dict[str, Any]:
    """A restore as the protocol names it."""
    return {
        "kind": done.kind,
        "fromTurn": turn,
        "restored": done.restored,
        "created": done.created,
        "deleted": done.deleted,
        "createdBy": done.created_by,
        "kept": done.kept,
        "dirsCreated": done.dirs_created,
        "dirsRemoved": done.dirs_removed,
        "outside": done.outside,
        "unsaved": done.unsaved,
        "uncovered": done.uncovered,
        "buffers": done.buffers,
        "vanished": done.vanished,
        "recovered": done.recovered,
        "recovery": done.recovery,
    }


class TurnCheckpoints:
    """One session's checkpoints (`session.checkpoints`): the `ports.Checkpointer`."""

    def __init__(self, session: SessionView) -> None:
        self.session = session
        self.settings = Settings.from_env()  # what the engine gets, when it is made
        self._engine: Checkpoints | None = None
        self._turns: Running | None = None  # the folder's running turns, once used
        self.begun: dict[int, Saved] = {}  # turns whose checkpoint was taken (or tried)
        self.failed: set[int] = set()  # turns whose checkpoint failed outright
        self.told = False  # a failed checkpoint was said
        self.told_settings = False

    @property
    def engine(self) -> Checkpoints:
        """The folder's `Checkpoints`, made (and the package imported) on first use."""
        if self._engine is None:
            from ..checkpoints import for_cwd

            self._engine = for_cwd(self.session.cwd, self.settings)
            _engines.setdefault(self.turns, set()).add(self._engine)
        return self._engine

    @property
    def turns(self) -> Running:
        """The folder's running turns (`running.of_folder`: the engine's own), without
        the engine; the session counts as one of the folder's from its first use."""
        if self._turns is None:
            from ..checkpoints.running import of_folder

            self._turns = of_folder(self.settings, Path(self.session.cwd).resolve())
            _users[self._turns] = _users.get(self._turns, 0) + 1
        return self._turns

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    # -- around a turn ----------------------------------------------------------------
    def started(self, turn: int) -> None:
        self.turns.started(self.session.id, turn)
        problems = self.settings.problems  # the engine's settings are these
        if problems and not self.told_settings:
            self.told_settings = True
            self.notice("checkpoint settings ignored: " + "; ".join(problems))

    async def before_tool(self, turn: int, tool: str, args: dict[str, Any]) -> None:
        if not self.enabled:
            return
        if turn not in self.begun:
            saved = await self.engine.begin(self.session.id, turn)
            self.begun[turn] = saved
            if not saved.ok:
                self.failed.add(turn)
                if not self.told:  # once per session
                    self.told = True
                    self.notice(
                        f"checkpoint of turn {turn} failed ({saved.kind}: {saved.error}); "
                        "only what the file tools change in it can be undone"
                    )
        if tool in FILE_TOOLS and isinstance(args.get("path"), str):
            try:
                path = resolve(self.session, args["path"])
            except (OSError, RuntimeError, ValueError):
                return  # the tool itself says what is wrong with the path
            await self.engine.before_write(self.session.id, turn, path)

    async def ended(self, turn: int) -> None:
        try:
            if turn in self.begun:
                seen = getattr(self.session, "seen", None)
                applied = dict(getattr(seen, "applied", None) or {})  # in buffers, maybe
                saved = await self.engine.end(self.session.id, turn, buffers=applied)
                if not saved.ok:
                    log.info("checkpoint: end of turn %d: %s", turn, saved.error)
        finally:
            self.turns.ended(self.session.id, turn)

    def notice(self, text: str) -> None:
        self.session.output.say(text, "info")

    # -- the Checkpointer port -------------------------------------------------------
    def running(self) -> str | None:
        return self.turns.running(besides=self.session.id)

    async def restore(
        self, turn: int, dry_run: bool, force: bool, confirm: list[str] | None = None
    ) -> dict[str, Any]:
        """Restore the first checkpoint from `turn` on: the turns before it that have
        none changed no file (a turn is checkpointed before its first change)."""
        sid = self.session.id
        if turn <= self.engine.pruned(sid):
            raise NoCheckpoint(
                f"no checkpoint can rewind the files to turn {turn}: one from it on was "
                "pruned (ELELEM_CHECKPOINTS_KEEP, ELELEM_CHECKPOINTS_DAYS); "
                "rewind the conversation alone (files: false)",
                turnId=turn,
                reason="pruned",
            )
        listed = [c for c in await self.engine.list(sid) if c.turn >= turn]
        gone = sorted(c.turn for c in listed if c.kind == "lost")
        if gone:
            raise NoCheckpoint(
                f"the checkpoint of turn {gone[0]} is missing or broken: its files cannot be "
                "rewound; rewind the conversation alone (files: false)",
                turnId=turn,
                reason="missing",
            )
        held = sorted(c.turn for c in listed)
        lost = sorted(t for t in self.failed if t >= turn and t not in held)
        if lost:
            raise NoCheckpoint(
                f"the checkpoint of turn {lost[0]} failed: its files cannot be rewound; "
                "rewind the conversation alone (files: false)",
                turnId=turn,
                reason="failed",
            )
        if not held:
            return dict(NOTHING, fromTurn=None)
        done = await self.engine.restore(sid, held[0], dry_run, force, confirm)
        if done.kind == "outside_changes":
            raise OutsideChanges(
                f"{done.error}: resend with confirm (these files) or force to overwrite them",
                turnId=turn,
                files=shape(done, held[0]),
            )
        if not done.ok:
            reasons = {
                "unknown_checkpoint": "missing",
                "disabled": "disabled",
                "tampered": "tampered",
            }
            if done.kind in reasons:
                error = done.error or f"no checkpoint of turn {held[0]}"
                raise NoCheckpoint(error, turnId=turn, reason=reasons[done.kind])
            raise CheckpointFailed(
                f"the rewind of turn {turn} failed: {done.error}", turnId=turn, reason=done.kind
            )
        return shape(done, held[0])

    async def forget(self, since: int) -> None:
        await self.engine.forget(self.session.id, since=since)
        for turn in [t for t in self.begun if t >= since]:
            del self.begun[turn]
        self.failed = {t for t in self.failed if t < since}

    async def listed(self) -> dict[int, dict[str, Any]]:
        sid = self.session.id
        checkpoints, changes = await asyncio.gather(self.engine.list(sid), self.engine.changes(sid))
        found = {}
        for c in checkpoints:
            files = changes.get(c.turn, [])
            found[c.turn] = {
                "kind": c.kind,
                "at": c.at,
                "ended": c.ended,
                "files": files[:50],
                "filesTotal": len(files),
            }
        return found

    async def close(self) -> None:
        turns = self._turns
        if turns is None:  # never used: nothing of the folder's upkeep is this session's
            return
        left = _users.get(turns, 1) - 1
        if left > 0:
            _users[turns] = left
            return
        _users.pop(turns, None)
        for engine in _engines.pop(turns, ()):  # the folder's upkeep stops with its last
            await engine.close()


def of(session: SessionView) -> TurnCheckpoints:
    """The session's checkpoints, made on first use (and kept across /reload)."""
    current = getattr(session, "checkpoints", None)
    if not isinstance(current, TurnCheckpoints) or current.session is not session:
        current = TurnCheckpoints(session)
        session.checkpoints = current
    return current


def sweep_once(root: Path, days: float) -> None:
    """Remove stale shadow folders, once per process, in the background."""
    if _swept:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop (a plain script): the next session's start will do
        return
    _swept.append(loop.create_task(_sweep(root, days)))


async def _sweep(root: Path, days: float) -> None:
    try:
        from ..checkpoints.retention import stale_folders

        removed = await stale_folders(root, days)
    except Exception as exc:  # upkeep: never anyone's failure
        log.info("checkpoints: the sweep of stale folders stopped: %s", exc)
        return
    if removed:
        log.info("checkpoints: removed %d stale folders", len(removed))


async def confirm_and_rewind(session: SessionView, turn: int) -> None:
    """Show what a rewind to before `turn` would do, ask, then do it."""
    history = of(session)
    files = history.enabled
    numbers = numbered(session)  # the turns as the user counts them, before any drop
    label = numbers.get(turn, turn)

    def name(number: int) -> int:
        return numbers.get(number, number)

    done: Rewound | None = None
    for _ in range(ASKED):  # a file the plan named, changed while it was shown: asked again
        plan = await rewind(session, turn, files=files, conversation=True, dry_run=True)
        prompt = "\n".join(
            [f"Rewind to before turn {label}?", *describe(plan, number=name)]
            + ([] if files else ["  (checkpoints are off: the files stay as they are)"])
        )
        answer = await ask(
            session.input,
            prompt,
            CONFIRM,
            kind="confirm",
            tool={
                "name": "rewind",
                "arguments": {"turnId": turn, "files": files, "conversation": True},
                "plan": plan.to_dict(),
            },
        )
        if answer != "yes":
            session.output.say("  → not rewound")
            return
        lost = user_files(plan)  # the user agreed to lose these, as they were shown
        try:
            done = await rewind(session, turn, files=files, conversation=True, confirm=lost)
            break
        except OutsideChanges:
            session.output.say("  files changed while the question was open: asking again")
    if done is None:
        session.output.say("  → not rewound: the files kept changing while it asked")
        return
    said = [f"  → rewound to before turn {label}", *describe(done, number=name)]
    session.output.say("\n".join(said))


def user_files(plan: Rewound) -> list[str]:
    """What a rewind's plan says the user would lose: the files changed outside the
    agent, and those no checkpoint holds the current content of."""
    files = plan.files or {}
    return sorted({*(files.get("outside") or []), *(files.get("unsaved") or [])})


def turn_list(listed: list[dict[str, Any]]) -> str:
    """`/rewind`'s list: number, local time, the prompt, the files it changed."""
    if not listed:
        return "  no turn to rewind"
    lines = []
    for entry in listed:
        count = entry["filesTotal"]
        files = f"  ({count} file{'s' if count != 1 else ''})" if count else ""
        when = datetime.fromisoformat(entry["at"]).astimezone().strftime("%H:%M")
        lines.append(f"  {entry['number']:>4}  {when}  {entry['prompt']}{files}")
    lines.append("  /rewind N goes back to before turn N (files and conversation)")
    return "\n".join(lines)


def register(plugin: Plugin) -> None:
    @plugin.setup
    def attach(session: SessionView) -> None:
        settings = of(session).settings
        if settings.enabled:
            sweep_once(settings.root, settings.days)

    @plugin.on("turn_start")
    def turn_started(session: SessionView, turn: int) -> None:
        of(session).started(turn)

    @plugin.before()
    async def checkpoint_first(session: SessionView, args: dict[str, Any], tool_name: str) -> None:
        turn = session.turn_id
        if turn is None or session.toolbox.resolve(tool_name).kind in READ_ONLY:
            return
        await of(session).before_tool(turn, tool_name, args)

    @plugin.on("turn_end")
    async def turn_ended(session: SessionView, turn: int, result: Any) -> None:
        await of(session).ended(turn)

    @plugin.on("close")
    async def closed(session: SessionView) -> None:
        current = getattr(session, "checkpoints", None)
        if isinstance(current, TurnCheckpoints):
            await current.close()

    @plugin.on("delete")
    async def deleted(session_id: str, cwd: Path) -> None:
        from ..checkpoints import for_cwd

        await for_cwd(cwd).forget(session_id)

    @plugin.command("undo", "Undo the last turn: its file changes and its messages")
    async def undo(session: SessionView, args: str | None) -> None:
        turn = last_turn(session)
        if turn is None:
            session.output.say("  → nothing to undo")
            return
        await confirm_and_rewind(session, turn)

    def numbers(session: SessionView) -> list[str]:
        return [str(n) for n in sorted(numbered(session).values(), reverse=True)]

    @plugin.command(
        "rewind",
        "Go back to before a turn: /rewind lists them, /rewind N",
        lambda s: lambda: numbers(s),
    )
    async def rewind_to(session: SessionView, args: str | None) -> None:
        if not args:
            session.output.say(turn_list(await turns(session)))
            return
        if not args.strip().isdigit() or len(args.strip()) > 10:
            session.output.say("usage: /rewind N, where N is a turn (/rewind lists them)", "error")
            return
        wanted = int(args.strip())
        by_number = {number: turn for turn, number in numbered(session).items()}
        if wanted not in by_number:
            held = f"1–{len(by_number)}" if by_number else "none"
            session.output.say(f"no turn {wanted} (the turns: {held}; /rewind lists them)", "error")
            return
        await confirm_and_rewind(session, by_number[wanted])
