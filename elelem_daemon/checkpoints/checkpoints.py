"""Checkpoints: the checkpoints of one working directory, for every session in it.

`begin` / `end` snapshot the tree around a turn, `before_write` keeps a file where git
cannot, `restore` puts the tree back as it was before a turn, `forget` and the
background upkeep prune. Every call answers data (`outcome`): a checkpoint that
fails never fails the turn. Refs, in the shadow repository:

    refs/elelem/<session>/<turn>        the tree before the turn (the checkpoint)
    refs/elelem-end/<session>/<turn>    the tree when the turn ended
    refs/elelem-undo/<session>/<turn>   the tree just before a restore to that turn

What changed outside the agent since a checkpoint is what changed between the end of
one of the session's turns and the start of the next (or now): `restore` lists those
files among the ones it touches (`Restored.outside`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import stat
import time
import weakref
from pathlib import Path

from . import manifest, retention
from .copies import Copies
from .git import GitError, find_git
from .lock import held
from .outcome import Checkpoint, Restored, Saved
from .settings import Settings
from .shadow import Shadow, folder_of

log = logging.getLogger(__name__)

SESSION = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a session id that can name a ref
MAX_TURN = 2**31
START, END, UNDO = "refs/elelem", "refs/elelem-end", "refs/elelem-undo"
GC_EVERY = 50  # checkpoints between two `git gc`
PRUNE_EVERY = 20
GC_TIMEOUT = 600.0


def ref(kind: str, session: str, turn: int) -> str:
    return f"{kind}/{session}/{turn}"


def bad_ids(session: object, turn: object) -> str | None:
    if not isinstance(session, str) or not SESSION.fullmatch(session):
        return f"invalid session id for a checkpoint: {session!r}"
    if isinstance(turn, bool) or not isinstance(turn, int) or not 0 <= turn < MAX_TURN:
        return f"invalid turn id for a checkpoint: {turn!r}"
    return None


class Checkpoints:
    """The checkpoints of the folder `cwd` (one object per folder: `for_cwd`)."""

    def __init__(self, cwd: Path | str, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.cwd = Path(cwd).resolve()
        self.folder = folder_of(self.settings.root, self.cwd)
        self.copies = Copies(self.folder, self.cwd, self.settings.max_file)
        self._shadow: Shadow | None = None
        self._looked = False
        self._off: str | None = None  # why git checkpoints stopped in this process
        self._kinds: dict[tuple[str, int], str] = {}
        self._upkeep: asyncio.Task[None] | None = None
        self._saves = 0
        _made.add(self)

    # -- what can run -------------------------------------------------------------
    def refusal(self) -> str | None:
        """Why git snapshots are not taken here (the copy fallback may still be)."""
        if self._off:
            return self._off
        if self.cwd == Path(self.cwd.anchor) or self.cwd == Path.home().resolve():
            return f"checkpoints are not taken of {self.cwd} (the root or the home folder)"
        if not self.cwd.is_dir():
            return f"{self.cwd} is not a folder"
        return None

    async def shadow(self) -> Shadow | None:
        """The git side, or None where git is missing (then copies are kept)."""
        if not self._looked:
            exe = await find_git()
            if exe:
                s = self.settings
                self._shadow = Shadow(exe, self.cwd, s.root, s.timeout, s.max_file)
            self._looked = True
        return None if self.refusal() else self._shadow

    # -- around a turn ------------------------------------------------------------
    async def begin(self, session: str, turn: int) -> Saved:
        """Before a turn that may change files: the checkpoint."""
        return await self._save(session, turn, START)

    async def end(self, session: str, turn: int) -> Saved:
        """When the turn is over (done, failed or cancelled): what it left."""
        return await self._save(session, turn, END)

    async def _save(self, session: str, turn: int, kind: str) -> Saved:
        began = time.perf_counter()
        if not self.settings.enabled:
            return Saved(False, "disabled", error="checkpoints are off (ELELEM_CHECKPOINTS=0)")
        if problem := bad_ids(session, turn):
            return Saved(False, "refused", error=problem)
        shadow = await self.shadow()
        if shadow is None or self._kinds.get((session, turn)) == "copy":
            return await self._copy(session, turn, kind, began)
        await self._stop_upkeep()
        try:
            async with held(shadow.lock_file, self.settings.timeout):
                await shadow.ensure()
                phase = "start" if kind == START else "end"
                snap = await shadow.snapshot(
                    f"elelem {phase} of turn {turn}",
                    session=session,
                    turn=turn,
                    phase=phase,
                    at=time.time(),
                )
                await shadow.set_refs({ref(kind, session, turn): snap.commit, "HEAD": snap.commit})
        except (GitError, OSError) as exc:
            error_kind = getattr(exc, "kind", "io_error")
            if error_kind == "timeout":
                self._off = f"git checkpoints stopped for {self.cwd} after a timeout: {exc}"
            log.warning("checkpoint of %s failed: %s", self.cwd, exc)
            if kind == START:  # the file tools can still keep what they touch
                self._kinds[(session, turn)] = "copy"
                await asyncio.to_thread(self.copies.begin, session, turn)
            return Saved(False, error_kind, error=str(exc), ms=ms(began))
        self._kinds[(session, turn)] = "git"
        self._saves += 1
        self._schedule(snap.first)
        return Saved(
            True, "git", snap.commit, snap.changed, snap.manifest.skipped, snap.first, ms(began)
        )

    async def _copy(self, session: str, turn: int, kind: str, began: float) -> Saved:
        try:
            if kind == START:
                self._kinds[(session, turn)] = "copy"
                await asyncio.to_thread(self.copies.begin, session, turn)
            else:
                await asyncio.to_thread(self.copies.end, session, turn)
        except OSError as exc:
            return Saved(False, "io_error", error=str(exc), ms=ms(began))
        self._saves += 1
        self._schedule()
        return Saved(True, "copy", error=self.refusal(), ms=ms(began))

    async def before_write(self, session: str, turn: int, path: str | Path) -> bool:
        """A file tool is about to change `path`: keep it if no git checkpoint covers the
        turn. True when the turn can restore the file."""
        if not self.settings.enabled or bad_ids(session, turn):
            return False
        if self._kinds.get((session, turn)) == "git":
            return True
        try:
            return await asyncio.to_thread(self.copies.before_write, session, turn, path)
        except OSError as exc:
            log.warning("checkpoint copy of %s failed: %s", path, exc)
            return False

    # -- looking back -------------------------------------------------------------
    async def list(self, session: str) -> list[Checkpoint]:
        """The session's checkpoints, oldest first."""
        if bad_ids(session, 0):
            return []
        found: dict[int, Checkpoint] = {}
        for turn in await asyncio.to_thread(self.copies.turns, session):
            record = self.copies.load(session, turn) or {}
            found[turn] = Checkpoint(
                session, turn, record.get("at", 0), "copy", bool(record.get("end"))
            )
        await self.shadow()
        shadow = self._shadow
        if shadow and (shadow.dir / "HEAD").is_file():
            try:
                refs = await shadow.refs(f"{START}/{session}/", f"{END}/{session}/")
            except GitError:
                refs = []
            ended = {retention.turn_of(r) for r, _, _ in refs if r.startswith(END + "/")}
            for name, _, when in refs:
                if name.startswith(START + "/") and (found_turn := retention.turn_of(name)):
                    turn = found_turn[1]
                    found[turn] = Checkpoint(session, turn, when, "git", found_turn in ended)
        return [found[t] for t in sorted(found)]

    async def restore(self, session: str, turn: int, dry_run: bool = False) -> Restored:
        """Put the folder back as it was before `turn` (later turns' changes go too).
        With `dry_run`, only say what would change. The face refuses while a turn runs."""
        began = time.perf_counter()
        if not self.settings.enabled:
            return Restored(
                False, dry_run, "disabled", error="checkpoints are off (ELELEM_CHECKPOINTS=0)"
            )
        if problem := bad_ids(session, turn):
            return Restored(False, dry_run, "refused", error=problem)
        await self.shadow()
        shadow = self._shadow  # restoring is allowed even where snapshots stopped
        try:
            if shadow and (shadow.dir / "HEAD").is_file():
                await self._stop_upkeep()
                async with held(shadow.lock_file, self.settings.timeout):
                    await shadow.ensure()
                    if await shadow.resolve(ref(START, session, turn)):
                        done = await self._restore_git(shadow, session, turn, dry_run)
                        done.ms = ms(began)
                        return done
            done = await asyncio.to_thread(self.copies.restore, session, turn, dry_run)
        except (GitError, OSError) as exc:
            log.warning("restore of %s failed: %s", self.cwd, exc)
            return Restored(
                False, dry_run, getattr(exc, "kind", "io_error"), error=str(exc), ms=ms(began)
            )
        if done.kind == "unknown_checkpoint":
            done.error = f"no checkpoint of turn {turn} in session {session}"
        done.ms = ms(began)
        return done

    async def _restore_git(
        self, shadow: Shadow, session: str, turn: int, dry_run: bool
    ) -> Restored:
        target = await shadow.resolve(ref(START, session, turn))
        assert target is not None
        now = await shadow.snapshot(
            f"elelem before a restore to turn {turn}",
            session=session,
            turn=turn,
            phase="undo",
            at=time.time(),
        )
        await shadow.set_refs({"HEAD": now.commit})
        changes = await shadow.diff(target, now.commit)
        wanted, _ = await shadow.manifest_of(target)
        done = Restored(True, dry_run, "git")
        for status, path in changes:
            {"A": done.deleted, "D": done.created}.get(status, done.restored).append(path)
        done.unsaved = sorted(await shadow.present(target, now.manifest.skipped))
        for path in done.unsaved:  # out of the index for its size, yet on disk
            done.created.remove(path)
            done.restored.append(path)
        done.restored.sort()
        touched = set(done.restored) | set(done.created) | set(done.deleted)
        if not (wanted.truncated or now.manifest.truncated):  # a chmod alone, undone too
            was, has = wanted.modes, now.manifest.modes
            done.restored += sorted(p for p in {*was, *has} - touched if was.get(p) != has.get(p))
            touched |= set(done.restored)
        done.outside = sorted(await self._outside(shadow, session, turn, now.commit) & touched)
        keep = set(wanted.empty_dirs)
        inside = [*done.created, *done.restored, *keep]
        done.dirs_created = await asyncio.to_thread(missing, self.cwd, wanted.empty_dirs)
        done.dirs_removed = [
            d for d in now.manifest.empty_dirs
            if d not in keep and not any(p.startswith(d + "/") for p in inside)
        ]  # fmt: skip
        if dry_run:
            return done
        await shadow.set_refs({ref(UNDO, session, turn): now.commit})
        done.undo = now.commit
        modes = await asyncio.to_thread(current_modes, self.cwd, done.restored)
        await shadow.checkout(target)
        await asyncio.to_thread(settle, self.cwd, done, wanted, modes, shadow.mask)
        return done

    async def _outside(self, shadow: Shadow, session: str, turn: int, now: str) -> set[str]:
        """Paths changed between the session's turns (end of one, start of the next)."""
        refs = await shadow.refs(f"{START}/{session}/", f"{END}/{session}/")
        starts: dict[int, str] = {}
        ends: dict[int, str] = {}
        for name, commit, _ in refs:
            if (found := retention.turn_of(name)) and found[1] >= turn:
                (ends if name.startswith(END + "/") else starts)[found[1]] = commit
        order = sorted(starts)
        spans = []
        for i, t in enumerate(order):
            if t in ends:
                spans.append((ends[t], starts[order[i + 1]] if i + 1 < len(order) else now))
        return await shadow.changed_in(spans)

    # -- forgetting ---------------------------------------------------------------
    async def forget(self, session: str, since: int | None = None) -> int:
        """Drop the session's checkpoints (from turn `since` on): `session/delete`, or
        the turns a conversation rewind dropped. Returns how many turns went."""
        if bad_ids(session, since or 0):
            return 0
        gone = await asyncio.to_thread(self.copies.forget, session, since)
        await self.shadow()
        shadow = self._shadow
        if shadow and (shadow.dir / "HEAD").is_file():
            await self._stop_upkeep()
            async with held(shadow.lock_file, self.settings.timeout):
                refs = await shadow.refs(
                    f"{START}/{session}/", f"{END}/{session}/", f"{UNDO}/{session}/"
                )
                names = [
                    r
                    for r, _, _ in refs
                    if since is None or (retention.turn_of(r) or ("", -1))[1] >= since
                ]
                await shadow.delete_refs(names)
                gone += len({retention.turn_of(r) for r in names if r.startswith(START + "/")})
            self._schedule(force_gc=True)
        return gone

    # -- upkeep, off the turn's path --------------------------------------------
    def _schedule(self, first: bool = False, force_gc: bool = False) -> None:
        gc = first or force_gc or self._saves % GC_EVERY == 0
        prune = self._saves == 1 or self._saves % PRUNE_EVERY == 0
        if (gc or prune) and (self._upkeep is None or self._upkeep.done()):
            self._upkeep = asyncio.get_running_loop().create_task(self.upkeep(prune, gc))

    async def upkeep(self, prune: bool = True, gc: bool = True) -> None:
        """Prune by count and age, then `git gc`; a checkpoint call cancels it."""
        if prune:
            with contextlib.suppress(OSError):
                s = self.settings
                await asyncio.to_thread(self.copies.prune, s.keep, s.days)
        shadow = self._shadow
        if shadow is None or not (shadow.dir / "HEAD").is_file():
            return
        try:
            async with held(shadow.lock_file, self.settings.timeout):
                if prune:
                    refs = await shadow.refs(START, END, UNDO)
                    gone = retention.expired(refs, self.settings.keep, self.settings.days)
                    await shadow.delete_refs(gone)
                    gc = gc or bool(gone)
                if gc:
                    await shadow.gc(GC_TIMEOUT)
        except (GitError, OSError) as exc:
            log.info("checkpoint upkeep of %s stopped: %s", self.cwd, exc)

    async def _stop_upkeep(self) -> None:
        task, self._upkeep = self._upkeep, None
        if task and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def close(self) -> None:
        await self._stop_upkeep()


def ms(began: float) -> float:
    return round((time.perf_counter() - began) * 1000, 1)


def current_modes(cwd: Path, paths: list[str]) -> dict[str, int]:
    found = {}
    for path in paths:
        info = manifest.lstat(cwd, path)
        if info is not None and stat.S_ISREG(info.st_mode):
            found[path] = info.st_mode & 0o7777
    return found


def missing(cwd: Path, paths: list[str]) -> list[str]:
    return [path for path in paths if manifest.lstat(cwd, path) is None]


def settle(
    cwd: Path, done: Restored, wanted: manifest.Manifest, before: dict[str, int], mask: int
) -> None:
    """After git's checkout: empty folders and permission bits as the checkpoint had them."""
    for path in wanted.empty_dirs:  # also those git removed with the files in them
        manifest.make_dirs(cwd, path)
    keep = set(wanted.empty_dirs)
    removed = []
    for path in done.dirs_removed:
        while path and path not in keep and manifest.remove_dir(cwd, path):
            removed.append(path)
            path = path.rpartition("/")[0]
            if any(k.startswith(path + "/") for k in keep):
                break
    done.dirs_removed = removed
    for path in [*done.restored, *done.created]:
        info = manifest.lstat(cwd, path)
        if info is None or not stat.S_ISREG(info.st_mode):
            continue
        mode = wanted.modes.get(path)
        if mode is None and wanted.truncated and path in before:  # bits unknown: keep them
            executable = bool(info.st_mode & stat.S_IXUSR)
            mode = before[path] | (0o111 & ~mask) if executable else before[path] & ~0o111
        if mode is None:
            mode = manifest.default_mode(info.st_mode, mask)
        if mode != info.st_mode & 0o7777:
            manifest.set_mode(cwd, path, mode)


_open: dict[tuple[Path, Path], Checkpoints] = {}
_made: weakref.WeakSet[Checkpoints] = weakref.WeakSet()


def for_cwd(cwd: Path | str, settings: Settings | None = None) -> Checkpoints:
    """The one `Checkpoints` of a folder in this process (per state folder)."""
    settings = settings or Settings.from_env()
    key = (settings.root, Path(cwd).resolve())
    if key not in _open or _open[key].settings != settings:
        _open[key] = Checkpoints(key[1], settings)
    return _open[key]


async def close_all() -> None:
    """Stop every folder's upkeep (at shutdown): a `git gc` under way is killed."""
    for checkpoints in list(_made):
        await checkpoints.close()
    _open.clear()
