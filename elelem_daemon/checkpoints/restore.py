"""Restore: putting the working tree back as a git checkpoint holds it.

0. The checkpoint's commit must name its own session, turn and phase (its manifest):
   a ref moved, or replaced by a symlink to another turn's, is refused (`tampered`);
1. A snapshot of the tree as it is now (so the restore can be undone:
   `refs/elelem-undo/<session>/<turn>`, and so nothing of the user's is lost);
2. `diff-tree` from the checkpoint to now: a file added since is deleted, one deleted
   since is created, one changed is rewritten; the manifests add empty folders and
   permission bits (a `chmod` alone is undone too);
3. the files an undone turn left in an editor's buffer (buffers.py), named in `buffers`
   and `restored` so the editor reloads them; then what changed outside the agent: the
   paths that differ between the end of one of the session's turns and the start of the
   next (or now), among those touched (an end laid over its disk's: from both);
4. what no checkpoint of the undone turns held is left exactly as it is (kept.py):
   a path added since that was there, left out, when one of them began (ignored, over
   the size limit, in a nested repository) is not deleted, whatever the ignore rules
   say now; the plan names it in `kept`, with why. A deletion names the undone turn
   whose end first held the file (`created_by`). A file the restore would write over
   though no snapshot holds what is there now is `unsaved`; and when a path one of
   them left out was there as it began and is gone now (or a folder left out whole
   changed inside), every file the restore deletes or overwrites is copied aside
   first (recovery.py: `vanished`, `recovered`, `recovery`);
5. unless it is a dry run, `read-tree -u --reset` (git writes the files, never
   through a symlink; the kept paths are first taken out of the index, so git leaves
   them), then the empty folders and the permission bits. Without `force`, files
   changed outside the agent (or unsaved) stop it before this step, unless each of
   them is in `confirm` (the list the user agreed to lose) and, when this process
   showed a plan (`seen`: the stat of each such file then), none changed since: the
   answer is otherwise the plan, with kind `outside_changes`.

The lock is held by the caller.
"""

from __future__ import annotations

import asyncio
import stat
import time
from collections.abc import Sequence
from pathlib import Path

from . import buffers, kept, manifest, recovery
from .kept import LeftOut
from .manifest import Manifest
from .outcome import Restored
from .refs import END, START, UNDO, ref, turn_of
from .shadow import Shadow


async def from_git(
    shadow: Shadow,
    session: str,
    turn: int,
    dry_run: bool,
    force: bool = True,
    confirm: Sequence[str] | None = None,
    seen: dict[str, list[int]] | None = None,
) -> Restored:
    target = await shadow.resolve(ref(START, session, turn))
    if target is None:
        return Restored(False, dry_run, "unknown_checkpoint")
    wanted, meta = await shadow.manifest_of(target)
    named = (meta.get("session"), meta.get("turn"), meta.get("phase"))
    if named != (session, turn, "start"):  # a ref moved or replaced (a symlink to another)
        error = f"the checkpoint of turn {turn} names another one {named!r}: not restored"
        return Restored(False, dry_run, "tampered", error=error)
    now = await shadow.snapshot(
        f"elelem before a restore to turn {turn}",
        session=session,
        turn=turn,
        phase="undo",
        at=time.time(),
    )
    await shadow.set_refs({"HEAD": now.commit})
    done = Restored(True, dry_run, "git")
    for status, path in await shadow.diff(target, now.commit):
        {"A": done.deleted, "D": done.created}.get(status, done.restored).append(path)
    done.unsaved = sorted(await shadow.present(target, now.manifest.skipped))
    for path in done.unsaved:  # out of the index for its size, yet on disk
        done.created.remove(path)
        done.restored.append(path)
    for path in await asyncio.to_thread(on_disk, shadow.cwd, done.created):
        done.created.remove(path)  # there, though no snapshot held it: overwritten
        done.restored.append(path)
        done.unsaved.append(path)
    done.unsaved.sort()
    starts, ended = await turns(shadow, session, turn)
    left = [LeftOut.of(t, *(await shadow.manifest_of(starts[t]))) for t in sorted(starts)]
    leave: dict[str, dict[str, object]] = {}
    for path in done.deleted:
        if why := kept.reason(path, left):
            leave[path] = why
    done.deleted = [p for p in done.deleted if p not in leave]
    untrack = sorted(leave)  # in the index now: out of it before git's checkout
    touched = {*done.restored, *done.created, *done.deleted}
    for path, why in kept.big(left).items():
        if path not in touched:
            leave.setdefault(path, why)
    done.kept = [{"path": p, **leave[p]} for p in sorted(leave)]
    done.created_by = await creators(shadow, done.deleted, ended)
    if not (wanted.truncated or now.manifest.truncated):  # a chmod alone is undone too
        was, has = wanted.modes, now.manifest.modes
        moved = {*was, *has} - touched - set(leave)
        done.restored += [p for p in moved if was.get(p) != has.get(p)]
        touched |= set(done.restored)
    # an undone turn's change left unsaved in a buffer: the disk holds the checkpoint's
    # text already, yet the editor must reload it (buffers.py)
    done.buffers = sorted(await buffers.changed(shadow, await ends(shadow, session, turn)))
    held = await shadow.present(target, [p for p in done.buffers if p not in touched])
    done.restored += sorted(held)
    touched |= held
    done.restored.sort()
    done.outside = sorted(await outside(shadow, session, turn, now.commit) & touched)
    keep = set(wanted.empty_dirs)
    inside = [*done.created, *done.restored, *keep]
    done.dirs_created = await asyncio.to_thread(missing, shadow.cwd, wanted.empty_dirs)
    done.dirs_removed = [
        d for d in now.manifest.empty_dirs
        if d not in keep and not any(p.startswith(d + "/") for p in inside)
    ]  # fmt: skip
    gone = await asyncio.to_thread(recovery.vanished, shadow.cwd, left)
    if gone:  # the turn may have moved them into what the restore deletes or overwrites
        keeping = await asyncio.to_thread(
            recovery.at_risk, shadow.cwd, [*done.deleted, *done.restored]
        )
        if keeping:
            folder = recovery.folder_for(recovery.root_of(shadow.dir.parent), session, turn)
            done.vanished = gone[: recovery.SHOWN_VANISHED]
            done.recovery = str(folder)
            done.recovered = [{"path": p, "to": str(folder / p)} for p in keeping]
    done.marks = await asyncio.to_thread(marks, shadow.cwd, [*done.outside, *done.unsaved])
    if dry_run:
        return done
    if not force and not agreed(done, confirm, seen):
        return refused(done)
    if done.recovery is not None:
        try:
            paths = [entry["path"] for entry in done.recovered]
            await asyncio.to_thread(recovery.keep, shadow.cwd, paths, Path(done.recovery))
        except OSError as exc:
            error = f"could not keep aside what the rewind would overwrite: {exc}; not restored"
            return Restored(False, dry_run, "io_error", error=error)
    await shadow.set_refs({ref(UNDO, session, turn): now.commit})
    done.undo = now.commit
    before = await asyncio.to_thread(current_modes, shadow.cwd, done.restored)
    await shadow.untrack(untrack)
    await shadow.checkout(target)
    await asyncio.to_thread(settle, shadow.cwd, done, wanted, before, shadow.mask)
    return done


def agreed(
    plan: Restored, confirm: Sequence[str] | None, seen: dict[str, list[int]] | None = None
) -> bool:
    """Nothing of the user's would be lost, or every such file is in `confirm` and, as
    far as `seen` (the stat of each when the plan was shown) tells, unchanged since."""
    lost = {*plan.outside, *plan.unsaved}
    if not lost:
        return True
    if confirm is None or not lost <= set(confirm):
        return False
    return seen is None or all(seen.get(p) == plan.marks.get(p) for p in lost)


def marks(cwd: Path, paths: list[str]) -> dict[str, list[int]]:
    """Each path's stat as a confirm compares it: size, times, inode ([] when gone)."""
    found: dict[str, list[int]] = {}
    for path in paths:
        info = manifest.lstat(cwd, path)
        found[path] = (
            [] if info is None
            else [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode]
        )  # fmt: skip
    return found


async def creators(shadow: Shadow, deleted: list[str], ended: dict[int, str]) -> dict[str, int]:
    """For each file a restore deletes, the undone turn whose end first held it (a file
    made outside the turns has none)."""
    found: dict[str, int] = {}
    left = list(deleted)
    for number in sorted(ended):
        if not left:
            break
        held: set[str] = set()
        for at in range(0, len(left), 1000):  # `present` looks at 1,000 paths a call
            held |= await shadow.present(ended[number], left[at : at + 1000])
        found.update({path: number for path in held})
        left = [path for path in left if path not in held]
    return found


def on_disk(cwd: Path, paths: list[str]) -> list[str]:
    """Those of `paths` there as a file or a symlink."""
    found = []
    for path in paths:
        info = manifest.lstat(cwd, path)
        if info is not None and not stat.S_ISDIR(info.st_mode):
            found.append(path)
    return found


def refused(plan: Restored) -> Restored:
    """The plan of a restore that stopped short: files changed outside the agent."""
    plan.ok, plan.kind, plan.dry_run = False, "outside_changes", True
    shown = ", ".join((plan.outside + plan.unsaved)[:20])
    plan.error = f"files changed outside the agent since that turn: {shown}"
    return plan


async def turns(shadow: Shadow, session: str, turn: int) -> tuple[dict[int, str], dict[int, str]]:
    """The start and end commits of the session's turns from `turn` on."""
    starts: dict[int, str] = {}
    ends: dict[int, str] = {}
    for name, commit, _ in await shadow.refs(f"{START}/{session}/", f"{END}/{session}/"):
        if (found := turn_of(name)) and found[1] >= turn:
            (ends if name.startswith(END + "/") else starts)[found[1]] = commit
    return starts, ends


async def ends(shadow: Shadow, session: str, turn: int) -> list[str]:
    return list((await turns(shadow, session, turn))[1].values())


async def outside(shadow: Shadow, session: str, turn: int, now: str) -> set[str]:
    """Paths changed between the session's turns from `turn` on: from the end of each
    to the start of the next, and from the end of the last to `now`. An end that holds
    buffers' texts (buffers.py) counts a path only when it differs from both what the
    agent left and what the disk held then: saving the agent's buffer, or never
    saving it, is not outside."""
    starts, ended = await turns(shadow, session, turn)
    order = sorted(starts)
    spans = []
    for i, t in enumerate(order):
        if t in ended:  # a turn that never ended (a crash) is all the agent's
            spans.append((ended[t], starts[order[i + 1]] if i + 1 < len(order) else now))
    disks = await buffers.parents(shadow, [end for end, _ in spans])
    if not disks:
        return await shadow.changed_in(spans)
    left = await shadow.changed_each(spans)  # keyed by the span's later commit: unique
    held = await shadow.changed_each([(disks[end], later) for end, later in spans if end in disks])
    found: set[str] = set()
    for end, later in spans:
        paths = set(left.get(later, []))
        found |= paths & set(held.get(later, [])) if end in disks else paths
    return found


def current_modes(cwd: Path, paths: list[str]) -> dict[str, int]:
    found = {}
    for path in paths:
        info = manifest.lstat(cwd, path)
        if info is not None and stat.S_ISREG(info.st_mode):
            found[path] = info.st_mode & 0o7777
    return found


def missing(cwd: Path, paths: list[str]) -> list[str]:
    return [path for path in paths if manifest.lstat(cwd, path) is None]


def settle(cwd: Path, done: Restored, wanted: Manifest, before: dict[str, int], mask: int) -> None:
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
