"""Copies: the checkpoints kept where git is missing, from the file tools' writes.

Without git (or when a turn's git checkpoint failed) the file tools call
`before_write(path)` before they change a file: the file as it is then (its bytes and
mode, a symlink's target, or that it did not exist) is kept once per turn. `end`
notes what each touched file became, so a restore can tell the user's later edits
from the agent's. What `execute` changes is not seen here (docs/checkpoints.md).

    <shadow>/copies/blobs/<sha256>               file contents, shared between turns
    <shadow>/copies/turns/<session>/<turn>.json  {"at", "files": {path: state}, "end": ...}

A state is `{"kind": "absent"}`, `{"kind": "file", "blob", "mode", "size"}`,
`{"kind": "link", "target"}` or `{"kind": "skipped", "size"}` (over the size limit:
left as it is by a restore, and listed as `uncovered`). Every function here is
blocking file work: `Checkpoints` runs them in a thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

from ..base.jsonsafe import dumps
from ..safety import owned
from . import manifest
from .outcome import Restored
from .shadow import private

CHUNK = 1 << 20
SOURCE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
WRITE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
BLOB = re.compile(r"[0-9a-f]{64}")
MAX_PATHS = 10_000  # per turn


class Copies:
    def __init__(self, folder: Path, cwd: Path, max_file: int) -> None:
        self.folder = folder / "copies"
        self.cwd = cwd
        self.max_file = max_file

    def record_path(self, session: str, turn: int) -> Path:
        return self.folder / "turns" / session / f"{turn}.json"

    def load(self, session: str, turn: int) -> dict[str, Any] | None:
        try:
            data = json.loads(owned.read_text(self.record_path(session, turn)))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else None

    def save(self, session: str, turn: int, record: dict[str, Any]) -> None:
        private(self.folder.parent, self.cwd)
        path = self.record_path(session, turn)
        path.parent.mkdir(parents=True, exist_ok=True)
        owned.replace(path, dumps(record, ensure_ascii=False).encode())

    def begin(self, session: str, turn: int) -> None:
        private(self.folder.parent, self.cwd)
        os.utime(self.folder.parent / "cwd")  # when this folder was last used, for pruning
        if self.load(session, turn) is None:
            self.save(session, turn, {"at": time.time(), "files": {}, "end": None})

    def turns(self, session: str) -> list[int]:
        folder = self.folder / "turns" / session
        found = []
        for path in folder.glob("*.json") if folder.is_dir() else []:
            with contextlib.suppress(ValueError):
                found.append(int(path.stem))
        return sorted(found)

    # -- what a file is ---------------------------------------------------------
    def relative(self, path: str | os.PathLike[str]) -> str | None:
        """`path` relative to the working directory, or None when it is outside."""
        full = os.path.normpath(os.path.join(self.cwd, os.fspath(path)))
        rel = os.path.relpath(full, self.cwd)
        if rel.startswith("..") or not manifest.safe(rel.replace(os.sep, "/")):
            return None
        parent = os.path.realpath(os.path.dirname(full))
        if os.path.commonpath([parent, os.path.realpath(self.cwd)]) != os.path.realpath(self.cwd):
            return None  # reached through a symlink that leaves the folder
        return rel.replace(os.sep, "/")

    def state(self, rel: str, keep: bool) -> dict[str, Any]:
        """What `rel` is now; with `keep`, its bytes are copied into the blobs."""
        info = manifest.lstat(self.cwd, rel)
        if info is None:
            return {"kind": "absent", "dirs": self._missing_parents(rel) if keep else []}
        if stat.S_ISLNK(info.st_mode):
            return {"kind": "link", "target": os.readlink(self.cwd / rel)}
        if not stat.S_ISREG(info.st_mode):
            return {"kind": "other"}
        if info.st_size > self.max_file:
            return {"kind": "skipped", "size": info.st_size}
        blob = self._copy(rel, keep)
        if blob is None:
            return {"kind": "skipped", "size": info.st_size}
        return {"kind": "file", "blob": blob, "mode": info.st_mode & 0o7777, "size": info.st_size}

    def _missing_parents(self, rel: str) -> list[str]:
        """The folders a write to `rel` will create, deepest first."""
        missing = []
        parent = rel.rpartition("/")[0]
        while parent and manifest.lstat(self.cwd, parent) is None:
            missing.append(parent)
            parent = parent.rpartition("/")[0]
        return missing

    def _copy(self, rel: str, keep: bool) -> str | None:
        digest = hashlib.sha256()
        blobs = self.folder / "blobs"
        temp = blobs / f"tmp-{os.getpid()}-{time.monotonic_ns()}"
        *parents, name = rel.split("/")
        try:
            with manifest.folder(self.cwd, parents) as fd:
                source = os.open(name, SOURCE, dir_fd=fd)  # a FIFO: never waited on
            if not stat.S_ISREG(os.fstat(source).st_mode):
                os.close(source)
                return None
            os.set_blocking(source, True)
            if keep:
                blobs.mkdir(parents=True, exist_ok=True)
            out_fd = os.open(temp, WRITE, 0o600) if keep else None
            sink = open(out_fd, "wb") if out_fd is not None else _null()
            with os.fdopen(source, "rb") as file, sink as out:
                while chunk := file.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
        except OSError:
            temp.unlink(missing_ok=True)
            return None
        blob = digest.hexdigest()
        if keep:
            os.replace(temp, blobs / blob)
        return blob

    # -- the calls --------------------------------------------------------------
    def before_write(self, session: str, turn: int, path: str | os.PathLike[str]) -> bool:
        """Keep `path` as it is, once per turn; False when it cannot be kept."""
        rel = self.relative(path)
        record = self.load(session, turn) or {"at": time.time(), "files": {}, "end": None}
        if rel is None or len(record["files"]) >= MAX_PATHS:
            return False
        if rel not in record["files"]:
            record["files"][rel] = self.state(rel, keep=True)
            self.save(session, turn, record)
        return record["files"][rel]["kind"] in ("absent", "file", "link")

    def end(self, session: str, turn: int, buffers: dict[str, str] | None = None) -> None:
        """What each kept file became; `buffers` (relative path: text) are the texts the
        editor applied and may hold unsaved (buffers.py): a file whose text differs from
        the disk gets that state too, under `buffers`."""
        record = self.load(session, turn)
        if record is not None:
            record["end"] = {rel: self.state(rel, keep=False) for rel in record["files"]}
            laid = {}
            for rel, text in (buffers or {}).items():
                end = record["end"].get(rel)
                if end is None or end["kind"] != "file":
                    continue
                data = text.encode("utf-8", "surrogatepass")
                blob = hashlib.sha256(data).hexdigest()
                if blob != end["blob"]:
                    laid[rel] = {**end, "blob": blob, "size": len(data)}
            if laid:
                record["buffers"] = laid
            else:
                record.pop("buffers", None)
            self.save(session, turn, record)

    def restore(self, session: str, turn: int, dry_run: bool) -> Restored:
        later = [t for t in self.turns(session) if t >= turn]
        loaded = [(t, self.load(session, t)) for t in later]
        kept = [(t, r) for t, r in loaded if r is not None]
        if not kept or kept[0][0] != turn:
            return Restored(
                False, dry_run, "unknown_checkpoint", error=f"no checkpoint of turn {turn}"
            )
        target: dict[str, dict[str, Any]] = {}
        outside: set[str] = set()
        # what each file was at the last end: on the disk, and in a buffer (buffers.py);
        # it changed outside the agent when it is neither
        last_end: dict[str, list[dict[str, Any]]] = {}
        in_buffers: set[str] = set()
        for _, record in kept:
            found = record.get("buffers")
            laid: dict[str, Any] = found if isinstance(found, dict) else {}
            for rel, before in record["files"].items():
                target.setdefault(rel, before)
                seen = last_end.get(rel)
                if seen and not any(same(s, before) for s in seen):
                    outside.add(rel)
                end = (record.get("end") or {}).get(rel)
                last_end[rel] = [end] if isinstance(end, dict) else []
                buffer = laid.get(rel)
                if isinstance(buffer, dict) and buffer.get("kind") == "file":
                    last_end[rel].append(buffer)
                    in_buffers.add(rel)
        done = Restored(True, dry_run, "copy")
        done.buffers = sorted(in_buffers)
        for rel in sorted(target):
            want, now = target[rel], self.state(rel, keep=False)
            seen = last_end.get(rel)
            if seen and not any(same(s, now) for s in seen):
                outside.add(rel)
            if same(want, now):
                if rel in in_buffers:  # the disk holds it already; its buffer is reloaded
                    done.restored.append(rel)
                continue
            if want["kind"] not in ("absent", "file", "link") or now["kind"] == "other":
                done.uncovered.append(rel)
                continue
            bucket = done.deleted if want["kind"] == "absent" else done.restored
            if now["kind"] == "absent":
                bucket = done.created
            if not dry_run and not self._put(rel, want):
                done.uncovered.append(rel)
                continue
            bucket.append(rel)
        changed = set(done.restored) | set(done.created) | set(done.deleted)
        done.outside = sorted(outside & changed)
        return done

    def _put(self, rel: str, want: dict[str, Any]) -> bool:
        """Make `rel` what `want` says, never through a symlink; False if it cannot."""
        *parents, name = rel.split("/")
        if want["kind"] == "absent":
            try:
                with manifest.folder(self.cwd, parents) as fd:
                    os.unlink(name, dir_fd=fd)
            except OSError:
                return False
            for folder in want.get("dirs") or []:  # the folders the write made, if empty
                if not (manifest.safe(folder) and manifest.remove_dir(self.cwd, folder)):
                    break
            return True
        temp = f".{name}.elelem-{os.getpid()}"
        try:
            with manifest.folder(self.cwd, parents, create=True) as fd:
                try:
                    if want["kind"] == "link":
                        os.symlink(want["target"], temp, dir_fd=fd)
                    else:
                        self._write(fd, temp, want)
                    os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
                except OSError:
                    with contextlib.suppress(OSError):
                        os.unlink(temp, dir_fd=fd)
                    raise
        except OSError:
            return False
        return True

    def _write(self, fd: int, temp: str, want: dict[str, Any]) -> None:
        if not isinstance(want.get("blob"), str) or not BLOB.fullmatch(want["blob"]):
            raise OSError(f"a copy names no blob: {want.get('blob')!r}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(temp, flags, 0o600, dir_fd=fd)
        blob_fd = owned.open_owned(self.folder / "blobs" / want["blob"])
        with os.fdopen(out, "wb") as file, open(blob_fd, "rb") as blob:
            while chunk := blob.read(CHUNK):
                file.write(chunk)
            os.fchmod(file.fileno(), int(want["mode"]) & 0o7777)

    def forget(self, session: str, since: int | None = None) -> int:
        gone = 0
        for turn in self.turns(session):
            if since is None or turn >= since:
                self.record_path(session, turn).unlink(missing_ok=True)
                gone += 1
        return gone

    def prune(self, keep: int, days: float, now: float | None = None) -> list[tuple[str, int]]:
        """Drop the turns beyond each session's last `keep`, or older than `days`;
        returns them."""
        now = time.time() if now is None else now
        gone: list[tuple[str, int]] = []
        for folder in (self.folder / "turns").glob("*") if (self.folder / "turns").is_dir() else []:
            turns = self.turns(folder.name)
            for turn in turns:
                record = self.load(folder.name, turn) or {}
                old = now - float(record.get("at") or 0) > days * 86_400
                if old or turn not in turns[-keep:]:
                    self.record_path(folder.name, turn).unlink(missing_ok=True)
                    gone.append((folder.name, turn))
        if gone:
            self.sweep()
        return gone

    def sweep(self) -> None:
        """Remove the blobs no record names any more."""
        used: set[str] = set()
        for path in (self.folder / "turns").glob("*/*.json"):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                for state in json.loads(owned.read_text(path))["files"].values():
                    if state.get("blob"):
                        used.add(state["blob"])
        for blob in (self.folder / "blobs").glob("*"):
            if blob.name not in used and not blob.name.startswith("tmp-"):
                blob.unlink(missing_ok=True)


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two states are the same file: kind, content and (for files) mode."""
    keys = {"file": ("blob", "mode"), "link": ("target",), "skipped": ("size",)}
    return a["kind"] == b["kind"] and all(a.get(k) == b.get(k) for k in keys.get(a["kind"], ()))


@contextlib.contextmanager
def _null():  # type: ignore[no-untyped-def]
    class Sink:
        def write(self, data: bytes) -> None:
            pass

    yield Sink()
