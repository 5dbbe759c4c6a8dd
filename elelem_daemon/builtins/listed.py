"""The fast paths of scan.py (issue 22), in C tools: the same files as its walk, in its
order. Standard library only; imported by scan.py as a script (not through the package).

- `files(root, skip, deadline, within)`: the regular files under root, relative to
  it, listed by `find -P` (symlinks never followed) with the folders named in `skip`
  pruned: what scan.walk yields, found in C; only those whose path contains `within`
  (`-path '*WITHIN*'`, escaped), when given: a glob's literal. None when `find` is
  not GNU find, its output passes CAP bytes, or the time is up (the caller then walks,
  or says it stopped). search.py runs the same `find` from the daemon for a glob.
- `containing(root, skip, literal, deadline)`: of those, the files whose bytes contain
  `literal`: `grep -rlZaFs -D skip --exclude-dir=NAME… -e LITERAL -- .` (GNU grep, C
  locale: bytes; binary files read as text; symlinks not followed in the recursion;
  FIFOs and devices skipped unopened; the skipped folders pruned at any depth). It is
  a filter only: scan.py still reads and matches every file it keeps, so the answer is
  the walk's; grep's output never reaches the model. A file whose decoded lines match
  a pattern holds that pattern's literal in its UTF-8 bytes, so nothing is lost.
- `order(rel)`: the walk's order (in each folder, its files by name, then its
  subfolders by name, depth first), to sort what these return.

Both run in scan.py's process group, so the tool runner's kill (cancel, time limit)
ends them too; they are also killed here at `deadline`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable

CAP = 256 << 20  # bytes of listing held at most
_gnu: dict[str, bool] = {}


def gnu(tool: str) -> str | None:
    """The path of GNU `tool`, or None (busybox and BSD tools differ in what we need)."""
    path = shutil.which(tool)
    if path is None:
        return None
    if path not in _gnu:
        try:
            done = subprocess.run([path, "--version"], capture_output=True, timeout=5)
            _gnu[path] = b"GNU" in done.stdout.split(b"\n", 1)[0]
        except (OSError, subprocess.SubprocessError):
            _gnu[path] = False
    return path if _gnu[path] else None


def order(rel: str) -> list[tuple[int, str]]:
    parts = rel.split(os.sep)
    return [(1, part) for part in parts[:-1]] + [(0, parts[-1])]


def plain(skip: list[str]) -> bool:
    """Whether each name is itself (find -name and grep --exclude-dir read patterns)."""
    return not any(set(name) & set("*?[]\\/") or not name for name in skip)


def find_argv(find: str, skip: list[str], within: str = "") -> list[str] | None:
    """find's arguments: the regular files, the folders named in skip pruned; only the
    paths that contain `within` (a filter: the caller still matches each one).

    The files are tested first and the folders to prune after: find moves name tests
    before type tests (its -O1), so with the prune first every file paid for each name
    in skip (issue 22: 0.18 against 0.10 CPU-seconds on 100,000 files); now a file is
    done after its type and `within`."""
    if not plain(skip):
        return None
    pruned: list[str] = []
    for name in skip:
        pruned += [*(["-o"] if pruned else []), "-name", name]
    contains = []
    if within:
        escaped = "".join("\\" + c if c in "*?[]\\" else c for c in within)
        contains = ["-path", f"*{escaped}*"]
    argv = [find, "-P", ".", "-mindepth", "1"]
    argv += ["(", "-type", "f", "(", *contains, "-print0", "-o", "-true", ")", ")"]
    if pruned:
        argv += ["-o", "(", "-type", "d", "(", *pruned, ")", "-prune", ")"]
    return argv


def run(
    argv: list[str | bytes] | list[str], root: str, deadline: float, fine: tuple[int, ...]
) -> list[str] | None:
    """The NUL-separated output of argv (in root, C locale), relative paths without `./`;
    None when it failed (an exit status not in `fine`), the time is up or it passed CAP."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GREP_", "POSIXLY"))}
    env["LC_ALL"] = "C"
    try:
        process = subprocess.Popen(
            argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
    except OSError:  # root is no folder, or the tool vanished
        return None
    chunks, size = [], 0
    assert process.stdout is not None
    try:
        fd = process.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or size > CAP:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        status = process.wait()
        if status not in fine or (status == 2 and not chunks):
            return None  # 2 and nothing found: grep itself failed (a bad option), not a file
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()
    names = os.fsdecode(b"".join(chunks)).split("\0")
    names.pop()  # after the last NUL
    return [name[2:] if name.startswith("./") else name for name in names]


def files(root: str, skip: list[str], deadline: float, within: str = "") -> list[str] | None:
    find = gnu("find")
    argv = find_argv(find, skip, within) if find else None
    # 1: a folder could not be read (the walk skips it too)
    return run(argv, root, deadline, (0, 1)) if argv else None


def containing(root: str, skip: list[str], literal: bytes, deadline: float) -> list[str] | None:
    grep = gnu("grep")
    if grep is None or b"\0" in literal or b"\n" in literal or not plain(skip):
        return None
    pruned = [f"--exclude-dir={name}" for name in skip]
    argv: list[str | bytes] = [grep, "-rlZaFs", "-D", "skip", *pruned, "-e", literal, "--", "."]
    # 1: nothing found; 2: a file could not be read (-s: not said; the walk skips it too)
    return run(argv, root, deadline, (0, 1, 2))


def relative(path: str, base: str) -> str:
    """How a result names path: relative to base, unless it is not under it."""
    rel = os.path.relpath(path, base)
    return path if rel.startswith("..") else rel


def needed(regex: re.Pattern[str]) -> str | None:
    """Text every string the regex matches contains, or None when there is none to tell:
    the longest run of literals in its top-level sequence (or in a group that is the
    sequence, as fnmatch.translate makes), without IGNORECASE."""
    if regex.flags & re.IGNORECASE:
        return None
    try:
        parsed = re._parser.parse(regex.pattern, regex.flags)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001  (an internal module: no prefilter rather than a crash)
        return None
    best: list[str] = []
    sequences = [list(parsed)]
    while sequences:
        run: list[str] = []
        for op, value in sequences.pop():
            if op is re._constants.LITERAL:  # type: ignore[attr-defined]
                run.append(chr(value))
                if len(run) > len(best):
                    best = run[:]
                continue
            run = []
            if op is re._constants.SUBPATTERN and not value[1] & re.IGNORECASE:  # type: ignore[attr-defined]
                sequences.append(list(value[3]))
    return "".join(best) or None


def encoded(text: str | None) -> bytes | None:
    try:
        return text.encode("utf-8") if text else None
    except UnicodeEncodeError:  # a lone surrogate: no decoded line contains it
        return None


def glob_pattern(pattern: str) -> tuple[Callable[[str], object], str]:
    """The glob's match (what fnmatch does, compiled once) and the literal its matches hold."""
    regex = re.compile(fnmatch.translate(pattern))
    return regex.match, needed(regex) or ""


def glob_match(match: Callable[[str], object], rel: str) -> bool:
    """The glob rule: the path relative to the root, or the file's name, matches."""
    return bool(match(rel) or match(rel.rpartition(os.sep)[2]))


def globbed(
    found: Iterable[str], match: Callable[[str], object], literal: str, root: str, base: str,
    limit: int,
) -> list[str]:  # fmt: skip
    """The first `limit` of `found` (paths relative to root) the glob matches, in the
    walk's order, named as results name them."""
    kept = [rel for rel in found if literal in rel and glob_match(match, rel)]
    kept.sort(key=order)
    return [relative(os.path.join(root, rel), base) for rel in kept[:limit]]
