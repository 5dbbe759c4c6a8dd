"""Checkpoints: the checkpoints of one working directory, for every session in it.

`begin` / `end` snapshot the tree around a turn (`shadow`), `before_write` keeps a
file where git cannot (`copies`), `restore` puts the tree back as it was before a
turn (`restore`), `forget` and the background upkeep prune (`retention`). Each call
holds the folder's lock (`lock`), is bounded by `ELELEM_CHECKPOINTS_TIMEOUT` as a
whole, and answers data (`outcome`): a checkpoint that fails never fails the turn.

Where git cannot be used (missing, too old, the home folder, `/` or a system folder
(`/proc`, `/sys`, `/dev`, `/run`), or after a git checkpoint of this folder ran out
of time) a turn gets the copy fallback: the file
tools' `before_write` calls keep what they touch. A turn whose git checkpoint failed
gets it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Sequence
from pathlib import Path

from . import restore, retention
from .buffers import overlay, relative
from .copies import Copies
from .git import GitError, find_git
from .lock import held
from .outcome import Checkpoint, Restored, Saved
from .refs import END, START, UNDO, bad_ids, ref, turn_of
from .running import Running, of_folder
from .settings import Settings
from .shadow import Shadow, folder_of

log = logging.getLogger(__name__)

GC_EVERY = 50  # checkpoints between two `git gc`
PRUNE_EVERY = 20
GC_TIMEOUT = 600.0
SHOWN_PLANS = 64  # plans whose files a confirm is checked against, per folder
OFF = "checkpoints are off (ELELEM_CHECKPOINTS=0)"
SYSTEM = tuple(Path(p) for p in ("/proc", "/sys", "/dev", "/run"))  # no git snapshot of these


def failure(exc: Exception, limit: float = 0.0) -> tuple[str, str]:
    """(kind, message) of a failure, for the answer."""
    if isinstance(exc, GitError):
        return exc.kind, str(exc)
    if isinstance(exc, TimeoutError):
        return "timeout", f"it took longer than {limit:g} s (ELELEM_CHECKPOINTS_TIMEOUT)"
    if isinstance(exc, OSError):
        return "io_error", str(exc)
    log.exception("checkpoints: unexpected failure")
    return "failed", f"{type(exc).__name__}: {exc}"


class Checkpoints:
    """The checkpoints of the folder `cwd` (one object per folder: `for_cwd`)."""

    def __init__(
        self, cwd: Path | str, settings: Settings | None = None, turns: Running | None = None
    ) -> None:
        self.settings = settings or Settings.from_env()
        self.cwd = Path(cwd).resolve()
        self.folder = folder_of(self.settings.root, self.cwd)
        self.copies = Copies(self.folder, self.cwd, self.settings.max_file)
        self.turns = turns or Running(self.folder.with_suffix(".turns"), self.settings.enabled)
        self._shadow: Shadow | None = None
        self._looked = False
        self._off: str | None = None  # why git checkpoints stopped in this process
        self._kinds: dict[tuple[str, int], str] = {}
        self._shown: dict[tuple[str, int], dict[str, list[int]]] = {}  # the last plans' marks
        self._upkeep: asyncio.Task[None] | None = None
        self._saves = 0
        self._gc_wanted = False
        _made.add(self)

    # -- what can run -------------------------------------------------------------
    def refusal(self) -> str | None:
        """Why git snapshots are not taken here (the copy fallback may still be)."""
        if self._off:
            return self._off
        if self.cwd == Path(self.cwd.anchor) or self.cwd == Path.home().resolve():
            return f"checkpoints are not taken of {self.cwd} (the root or the home folder)"
        if any(self.cwd.is_relative_to(system) for system in SYSTEM):
            return f"checkpoints are not taken of {self.cwd} (a system folder)"
        if not self.cwd.is_dir():
            return f"{self.cwd} is not a folder"
        return None

    async def _git(self) -> Shadow | None:
        """The git side wherever git is usable, whether or not snapshots are refused."""
        if not self._looked:
            exe = await find_git()
            if exe:
                s = self.settings
                self._shadow = Shadow(exe, self.cwd, s.root, s.timeout, s.max_file)
            self._looked = True
        return self._shadow

    async def _existing(self) -> Shadow | None:
        shadow = await self._git()
        return shadow if shadow and (shadow.dir / "HEAD").is_file() else None

    # -- around a turn ------------------------------------------------------------
    async def begin(self, session: str, turn: int) -> Saved:
        """Before a turn that may change files: the checkpoint."""
        return await self._save(session, turn, START)

    async def end(self, session: str, turn: int, buffers: dict[Path, str] | None = None) -> Saved:
        """When the turn is over (done, failed or cancelled): what it left, on the disk
        and in the editor's buffers (`buffers`: the texts the editor applied, by path;
        `buffers.py`)."""
        return await self._save(session, turn, END, buffers or {})

    async def _save(
        self, session: str, turn: int, kind: str, buffers: dict[Path, str] | None = None
    ) -> Saved:
        began = time.perf_counter()
        if not self.settings.enabled:
            return Saved(False, "disabled", error=OFF)
        if problem := bad_ids(session, turn):
            return Saved(False, "refused", error=problem)
        shadow = await self._git()
        if shadow is None or self.refusal() or self._kinds.get((session, turn)) == "copy":
            texts = relative(self.cwd, buffers or {}, self.settings.max_file)
            return await self._copy(session, turn, kind, began, texts)
        await self._stop_upkeep()
        try:
            async with asyncio.timeout(self.settings.timeout):
                async with held(shadow.lock_file, self.settings.timeout):
                    await shadow.ensure()
                    phase = "start" if kind == START else "end"
                    title = f"elelem {phase} of turn {turn}"
                    meta = {"session": session, "turn": turn, "phase": phase, "at": time.time()}
                    snap = await shadow.snapshot(title, **meta)
                    texts = relative(self.cwd, buffers or {}, self.settings.max_file)
                    message = snap.manifest.message(title, **meta)
                    try:
                        laid, _ = await overlay(shadow, snap.commit, snap.tree, texts, message)
                    except GitError as exc:  # the disk's end is still worth keeping
                        log.warning("checkpoint: the buffers of turn %d left out: %s", turn, exc)
                        laid = snap.commit
                    refs = {ref(kind, session, turn): laid, "HEAD": snap.commit}
                    await shadow.set_refs(refs)
        except Exception as exc:
            error_kind, error = failure(exc, self.settings.timeout)
            if error_kind == "timeout":
                self._off = f"git checkpoints stopped for {self.cwd} after a timeout: {error}"
            log.warning("checkpoint of %s failed: %s", self.cwd, error)
            if kind == START:  # the file tools can still keep what they touch
                self._kinds[(session, turn)] = "copy"
                with contextlib.suppress(OSError):
                    await asyncio.to_thread(self.copies.begin, session, turn)
            return Saved(False, error_kind, error=error, ms=ms(began))
        self._kinds[(session, turn)] = "git"
        self._saves += 1
        self._schedule(gc=snap.first)
        return Saved(True, "git", laid, snap.changed, snap.manifest.skipped, snap.first, ms(began))

    async def _copy(
        self, session: str, turn: int, kind: str, began: float, buffers: dict[str, str]
    ) -> Saved:
        try:
            if kind == START:
                self._kinds[(session, turn)] = "copy"
                await asyncio.to_thread(self.copies.begin, session, turn)
            else:
                await asyncio.to_thread(self.copies.end, session, turn, buffers)
        except Exception as exc:
            error_kind, error = failure(exc)
            return Saved(False, error_kind, error=error, ms=ms(began))
        self._saves += 1
        self._schedule()
        note = self.refusal() or (None if self._shadow else "git is missing (2.32 or later)")
        return Saved(True, "copy", error=note, ms=ms(began))

    async def before_write(self, session: str, turn: int, path: str | Path) -> bool:
        """A file tool is about to change `path`: keep it if no git checkpoint covers the
        turn. True when the turn can restore the file."""
        if not self.settings.enabled or bad_ids(session, turn):
            return False
        if self._kinds.get((session, turn)) == "git":
            return True
        try:
            return await asyncio.to_thread(self.copies.before_write, session, turn, path)
        except Exception as exc:
            log.warning("checkpoint copy of %s failed: %s", path, failure(exc)[1])
            return False

    # -- which turns run ----------------------------------------------------------
    def started(self, session: str, turn: int) -> None:
        """A turn of `session` runs in this folder from now (restores are refused)."""
        self.turns.started(session, turn)

    def ended(self, session: str, turn: int) -> None:
        self.turns.ended(session, turn)

    def running(self, besides: str | None = None) -> str | None:
        """A session (not `besides`) whose turn runs in this folder: its id, or "" for
        one of another elelem process; None when none does."""
        return self.turns.running(besides)

    # -- looking back -------------------------------------------------------------
    def pruned(self, session: str) -> int:
        """The newest turn of the session whose checkpoint retention pruned (0: none):
        a restore to it or an older turn cannot be trusted (retention.note_pruned)."""
        if bad_ids(session, 0):
            return 0
        return retention.pruned_turn(self.folder, session)

    async def changes(self, session: str) -> dict[int, list[str]]:
        """The files each ended turn of the session changed, from its checkpoint to its
        end (a git checkpoint), or the files its tools kept (a copy)."""
        if not self.settings.enabled or bad_ids(session, 0):
            return {}
        found: dict[int, list[str]] = {}
        with contextlib.suppress(OSError):
            for turn in await asyncio.to_thread(self.copies.turns, session):
                record = self.copies.load(session, turn) or {}
                found[turn] = sorted(record.get("files") or {})
        shadow = await self._existing()
        if shadow is None:
            return found
        try:
            refs = await shadow.refs(f"{START}/{session}/", f"{END}/{session}/")
            starts: dict[int, str] = {}
            ends: dict[int, str] = {}
            for name, commit, _ in refs:
                if found_turn := turn_of(name):
                    (ends if name.startswith(END + "/") else starts)[found_turn[1]] = commit
            spans = [(starts[t], ends[t]) for t in starts if t in ends]
            each = await shadow.changed_each(spans)
        except GitError:
            return found
        for turn in starts:
            if turn in ends:
                found[turn] = sorted(each.get(ends[turn], []))
        return found

    async def list(self, session: str) -> list[Checkpoint]:
        """The session's checkpoints, oldest first."""
        if bad_ids(session, 0):
            return []
        found: dict[int, Checkpoint] = {}
        with contextlib.suppress(OSError):
            for turn in await asyncio.to_thread(self.copies.turns, session):
                record = self.copies.load(session, turn) or {}
                at, ended = record.get("at", 0), bool(record.get("end"))
                found[turn] = Checkpoint(session, turn, at, "copy", ended)
        shadow = await self._existing()
        try:
            refs = await shadow.refs(f"{START}/{session}/", f"{END}/{session}/") if shadow else []
        except GitError:
            refs = []
        ended_turns = {turn_of(r) for r, _, _ in refs if r.startswith(END + "/")}
        for name, _, when in refs:
            if name.startswith(START + "/") and (found_turn := turn_of(name)):
                turn = found_turn[1]
                found[turn] = Checkpoint(session, turn, when, "git", found_turn in ended_turns)
        for name, _, when in refs:  # an end with no start: its checkpoint went (a broken ref)
            if name.startswith(END + "/") and (found_turn := turn_of(name)):
                if found_turn[1] not in found:
                    found[found_turn[1]] = Checkpoint(session, found_turn[1], when, "lost", True)
        return [found[t] for t in sorted(found)]

    async def restore(
        self,
        session: str,
        turn: int,
        dry_run: bool = False,
        force: bool = True,
        confirm: Sequence[str] | None = None,
    ) -> Restored:
        """Put the folder back as it was before `turn` (later turns' changes go too).
        With `dry_run`, only say what would change. Without `force`, files changed
        outside the agent since (`outside`, `unsaved`) stop it before anything is
        written: the answer is the plan, `ok` false, kind `outside_changes`, unless
        each of them is in `confirm` (the exact list the user agreed to lose). What no
        checkpoint held is left as it is (`kept`, restore.py). The face refuses while
        a turn runs (`running`)."""
        began = time.perf_counter()
        if not self.settings.enabled:
            return Restored(False, dry_run, "disabled", error=OFF)
        if problem := bad_ids(session, turn):
            return Restored(False, dry_run, "refused", error=problem)
        try:
            async with asyncio.timeout(self.settings.timeout):
                done = await self._restore(session, turn, dry_run, force, confirm)
        except Exception as exc:
            error_kind, error = failure(exc, self.settings.timeout)
            log.warning("restore of %s failed: %s", self.cwd, error)
            return Restored(False, dry_run, error_kind, error=error, ms=ms(began))
        if done.kind == "unknown_checkpoint":
            done.error = f"no checkpoint of turn {turn} in session {session}"
        key = (session, turn)
        if done.dry_run and done.kind in ("git", "outside_changes"):  # a plan, to be shown:
            self._shown.pop(key, None)  # a confirm is checked against it (restore.agreed)
            self._shown[key] = done.marks
            while len(self._shown) > SHOWN_PLANS:
                self._shown.pop(next(iter(self._shown)))
        elif done.ok:
            self._shown.pop(key, None)
        done.ms = ms(began)
        return done

    async def _restore(
        self, session: str, turn: int, dry_run: bool, force: bool, confirm: Sequence[str] | None
    ) -> Restored:
        await self._stop_upkeep()  # no prune under a restore
        shadow = await self._existing()  # allowed even where snapshots stopped
        if shadow is not None:
            async with held(shadow.lock_file, self.settings.timeout):
                await shadow.ensure()
                seen = self._shown.get((session, turn))
                done = await restore.from_git(shadow, session, turn, dry_run, force, confirm, seen)
            if done.kind != "unknown_checkpoint":
                return done
        copies = self.copies
        if not (dry_run or force):
            async with held(self.folder.with_suffix(".lock"), self.settings.timeout):
                plan = await asyncio.to_thread(copies.restore, session, turn, True)
                if not plan.ok:
                    return plan
                if not restore.agreed(plan, confirm):
                    return restore.refused(plan)
                return await asyncio.to_thread(copies.restore, session, turn, False)
        return await asyncio.to_thread(copies.restore, session, turn, dry_run)

    # -- forgetting ---------------------------------------------------------------
    async def forget(self, session: str, since: int | None = None) -> int:
        """Drop the session's checkpoints (from turn `since` on): `session/delete`, or
        the turns a conversation rewind dropped. Returns how many turns went."""
        if bad_ids(session, since or 0):
            return 0
        await self._stop_upkeep()
        try:
            gone = await asyncio.to_thread(self.copies.forget, session, since)
            if since is None:
                await asyncio.to_thread(retention.forget_pruned, self.folder, session)
            shadow = await self._existing()
            if shadow is None:
                return gone
            async with held(shadow.lock_file, self.settings.timeout):
                await shadow.ensure()  # a gc just killed may have left its lock files
                prefixes = (f"{kind}/{session}/" for kind in (START, END, UNDO))
                refs = await shadow.refs(*prefixes)
                names = [
                    r for r, _, _ in refs if since is None or (turn_of(r) or ("", -1))[1] >= since
                ]
                await shadow.delete_refs(names)
                gone += len({turn_of(r) for r in names if r.startswith(START + "/")})
        except Exception as exc:
            log.warning("forgetting checkpoints of %s failed: %s", session, failure(exc)[1])
            return 0
        self._schedule(gc=True)
        return gone

    # -- upkeep, off the turn's path --------------------------------------------
    def _schedule(self, gc: bool = False) -> None:
        gc = gc or self._gc_wanted or self._saves % GC_EVERY == 0
        prune = self._saves == 1 or self._saves % PRUNE_EVERY == 0
        if (gc or prune) and (self._upkeep is None or self._upkeep.done()):
            self._gc_wanted = gc
            self._upkeep = asyncio.get_running_loop().create_task(self.upkeep(prune, gc))

    async def upkeep(self, prune: bool = True, gc: bool = True) -> None:
        """Prune by count and age, then `git gc`; any checkpoint call cancels it (and
        a cancelled gc is asked for again after the next checkpoint)."""
        s = self.settings
        if prune:
            with contextlib.suppress(OSError, GitError):
                async with held(self.folder.with_suffix(".lock"), s.timeout):
                    dropped = await asyncio.to_thread(self.copies.prune, s.keep, s.days)
                    await asyncio.to_thread(retention.note_pruned, self.folder, dropped)
        shadow = self._shadow
        if shadow is None or not (shadow.dir / "HEAD").is_file():
            return
        try:
            async with held(shadow.lock_file, s.timeout):
                if prune:
                    gone = retention.expired(await shadow.refs(START, END, UNDO), s.keep, s.days)
                    await shadow.delete_refs(gone)
                    turns = [t for r in gone if r.startswith(START + "/") and (t := turn_of(r))]
                    await asyncio.to_thread(retention.note_pruned, self.folder, turns)
                    gc = gc or bool(gone)
                if gc:
                    self._gc_wanted = True
                    await shadow.gc(GC_TIMEOUT)
                    self._gc_wanted = False
        except Exception as exc:
            log.info("checkpoint upkeep of %s stopped: %s", self.cwd, failure(exc)[1])

    async def _stop_upkeep(self) -> None:
        task, self._upkeep = self._upkeep, None
        if task and not task.done():
            task.cancel()
            # wait, not `await task`: the gc's own CancelledError ends here, and a cancel
            # of the caller (a turn being cancelled) goes on up, never swallowed
            await asyncio.wait([task])

    async def close(self) -> None:
        await self._stop_upkeep()


def ms(began: float) -> float:
    return round((time.perf_counter() - began) * 1000, 1)


_open: dict[tuple[Path, Path], Checkpoints] = {}
_made: weakref.WeakSet[Checkpoints] = weakref.WeakSet()


def for_cwd(cwd: Path | str, settings: Settings | None = None) -> Checkpoints:
    """The one `Checkpoints` of a folder in this process (per state folder)."""
    settings = settings or Settings.from_env()
    key = (settings.root, Path(cwd).resolve())
    if key not in _open or _open[key].settings != settings:
        _open[key] = Checkpoints(key[1], settings, of_folder(settings, key[1]))
    return _open[key]


async def close_all() -> None:
    """Stop every folder's upkeep (at shutdown): a `git gc` under way is killed."""
    for checkpoints in list(_made):
        await checkpoints.close()
    _open.clear()
