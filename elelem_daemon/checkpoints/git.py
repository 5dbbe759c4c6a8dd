"""Git: runs git on the shadow repository, with nothing of the user's able to run code.

Every call is an asyncio subprocess in its own process group (killed whole on a
timeout or a cancel), bounded in time and in output, with a clean environment:

- `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE` point at the shadow repository and
  the working directory, so the user's own `.git` is never opened: not its config,
  hooks, index, refs or objects;
- no system or global config (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`,
  `HOME` and `XDG_CONFIG_HOME` moved to an empty folder), none of the daemon's `GIT_*`
  variables (`GIT_CONFIG_PARAMETERS`, `GIT_EXTERNAL_DIFF`, ...);
- `-c` settings that switch off whatever could start a program: hooks, fsmonitor,
  pagers, editors, credential helpers, external diff and text conversion; and the
  shadow's `info/attributes` unsets `filter`, `text`, `eol`, `ident` and
  `working-tree-encoding` for every path, so a project's `.gitattributes` changes
  no byte and names no filter (docs/checkpoints.md, Safety).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
from pathlib import Path

OUTPUT_LIMIT = 64 << 20
STDERR_LIMIT = 16 << 10
MINIMUM = (2, 32)  # GIT_CONFIG_GLOBAL, --pathspec-from-file
KILL_WAIT = 5.0

# Set on every call, after the shadow's own config, so they win over it.
SETTINGS = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.ignoreCase=false",
    "core.precomposeUnicode=false",
    "core.quotePath=false",
    "core.pager=cat",
    "core.editor=false",
    "core.askPass=",
    "core.sshCommand=false",
    "core.attributesFile=/dev/null",
    "core.logAllRefUpdates=false",
    "core.splitIndex=false",
    "credential.helper=",
    "diff.external=",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "submodule.recurse=false",
    "protocol.allow=never",
    "advice.addEmbeddedRepo=false",
    "init.defaultBranch=main",
)

_found: dict[str, str | None] = {}


def records(data: bytes) -> list[str]:
    """The paths of git's `-z` output."""
    return [os.fsdecode(item) for item in data.split(b"\0") if item]


def nul(paths: list[str]) -> bytes:
    """Paths for `--pathspec-from-file=- --pathspec-file-nul`."""
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


class GitError(Exception):
    """git failed, timed out or said too much; `kind` names which for the face."""

    def __init__(self, message: str, kind: str = "git_failed") -> None:
        super().__init__(message)
        self.kind = kind


async def find_git(path: str | None = None) -> str | None:
    """The git executable on PATH if it is recent enough (cached per PATH), else None."""
    path = os.environ.get("PATH", os.defpath) if path is None else path
    if path in _found:
        return _found[path]
    exe = shutil.which("git", path=path)
    version = None
    if exe:
        try:
            proc = await asyncio.create_subprocess_exec(
                exe,
                "version",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                env={"PATH": path, "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"},
                start_new_session=True,
            )
            try:  # asyncio.timeout, not wait_for: a turn's cancel as git answers is kept
                async with asyncio.timeout(10):
                    out, _ = await proc.communicate()
            except BaseException:  # timed out or cancelled: git goes too
                await kill(proc)
                raise
            version = re.search(rb"(\d+)\.(\d+)", out)
        except (OSError, TimeoutError):
            version = None
    ok = bool(version) and (int(version[1]), int(version[2])) >= MINIMUM  # type: ignore[index]
    _found[path] = exe if ok else None
    return _found[path]


class Git:
    """git for one shadow repository (`git_dir`) and one working directory."""

    def __init__(self, exe: str, git_dir: Path, work_tree: Path, timeout: float) -> None:
        self.exe = exe
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.timeout = timeout
        self.env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(git_dir / "home"),
            "XDG_CONFIG_HOME": str(git_dir / "home"),
            "GIT_DIR": str(git_dir),
            "GIT_WORK_TREE": str(work_tree),
            "GIT_INDEX_FILE": str(git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_SYSTEM": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_AUTHOR_NAME": "elelem",
            "GIT_AUTHOR_EMAIL": "elelem@localhost",
            "GIT_COMMITTER_NAME": "elelem",
            "GIT_COMMITTER_EMAIL": "elelem@localhost",
            "LC_ALL": "C",
        }
        self.argv = [exe, "--no-pager"]
        for setting in SETTINGS:
            self.argv += ["-c", setting]

    async def __call__(
        self,
        *args: str,
        stdin: bytes | None = None,
        ok: tuple[int, ...] = (0,),
        timeout: float | None = None,
        settings: tuple[str, ...] = (),
    ) -> bytes:
        """stdout of `git ARGS`; GitError if it exits otherwise, or runs out of time."""
        code, out, err = await self.run(*args, stdin=stdin, timeout=timeout, settings=settings)
        if code not in ok:
            text = err.decode("utf-8", "replace").strip().splitlines()
            detail = text[-1] if text else f"exit status {code}"
            raise GitError(f"git {args[0]}: {detail}")
        return out

    async def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        timeout: float | None = None,
        settings: tuple[str, ...] = (),
    ) -> tuple[int, bytes, bytes]:
        """`git ARGS`: its exit status, stdout and (the start of) stderr."""
        argv = list(self.argv)
        for setting in settings:
            argv += ["-c", setting]
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                *args,
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.work_tree,
                start_new_session=True,
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc}") from None
        limit = timeout or self.timeout
        try:  # asyncio.timeout, not wait_for: 3.11's wait_for can lose a cancel
            async with asyncio.timeout(limit):  # that comes as git ends
                out, err = await talk(proc, stdin)
        except TimeoutError:
            await kill(proc)
            raise GitError(f"git {args[0]} took longer than {limit:g} s", "timeout") from None
        except BaseException:  # cancelled, or too much output
            await kill(proc)
            raise
        return proc.returncode or 0, out, err


async def talk(proc: asyncio.subprocess.Process, stdin: bytes | None) -> tuple[bytes, bytes]:
    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(stdin or b"")
            await proc.stdin.drain()
        proc.stdin.close()

    async def read(stream: asyncio.StreamReader | None, limit: int, strict: bool) -> bytes:
        assert stream is not None
        chunks, size = [], 0
        while chunk := await stream.read(1 << 16):
            size += len(chunk)
            if size > limit:
                if strict:
                    raise GitError(f"git said more than {limit >> 20} MB", "too_much_output")
                continue  # stderr: keep the first part, drain the rest
            chunks.append(chunk)
        return b"".join(chunks)

    reading = asyncio.gather(
        read(proc.stdout, OUTPUT_LIMIT, True), read(proc.stderr, STDERR_LIMIT, False)
    )
    if stdin is not None:
        await asyncio.gather(feed(), reading)
    out, err = await reading
    await proc.wait()
    return out, err


async def kill(proc: asyncio.subprocess.Process) -> None:
    """Kill git's whole process group and reap it (a second cancel stops the wait,
    not the kill)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError, ProcessLookupError, ChildProcessError):
        async with asyncio.timeout(KILL_WAIT):  # a cancel meanwhile goes on up
            await asyncio.shield(proc.wait())
