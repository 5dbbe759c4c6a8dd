"""The oracle of tests/builtin/test_search_equivalence.py: elelem_daemon/builtins/scan.py as
it was before its fast paths (issue 22), kept verbatim so the fast one is compared with it
on hostile trees. Not used by the daemon.

The pure-Python `grep` and `glob`, run as a child process (standard library only):
`python -I -S scan.py grep|glob SPEC`, SPEC a JSON object. search.py runs it through
the tool runner (shell.run), so it is off the event loop, in its own process group,
cancelled with the turn, killed at its time limit, and its output capped.

Python's `re` backtracks (`(a|a)*b` on a long line takes for ever) and holds the GIL
while it does, so matching must not run in the daemon. Here, each file gets
`file_seconds` of matching (a timer signal interrupts `re`, which checks for signals
as it runs): a file that takes longer is skipped and named at the end. The whole
search stops at `seconds`, with a line saying so. Folders in `skip` and symlinks are
not followed; only regular files are read, line by line (at most LINE_CAP bytes of a
line are matched), and a file with a NUL byte in its first block counts as binary.

Output: `path:line:text` for grep, one path per line for glob, at most `limit`;
notes in brackets at the end. Exit status 0: something found; 1: nothing; 2: the
pattern is invalid (the message is the output).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import signal
import stat
import sys
import time

LINE_CAP = 1 << 20


class Slow(Exception):
    pass


armed = False


def alarm(*_: object) -> None:
    if armed:
        raise Slow


def walk(root: str, skip: set[str], deadline: float):
    """Regular files under root, sorted per folder, not through symlinks."""
    todo = [root]
    while todo:
        if time.monotonic() > deadline:
            return
        folder = todo.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        subfolders = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in skip:
                        subfolders.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    yield entry.path
            except OSError:
                continue
        todo.extend(reversed(subfolders))


def relative(path: str, base: str) -> str:
    rel = os.path.relpath(path, base)
    return path if rel.startswith("..") else rel


def lines_of(path: str):
    """(number, text) of each line; nothing for a binary or unreadable file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return
    with open(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        first = file.peek(8192)[:8192] if hasattr(file, "peek") else b""
        if b"\0" in first:
            return
        number = 0
        while True:
            raw = file.readline(LINE_CAP)
            if not raw:
                return
            number += 1
            if len(raw) == LINE_CAP and not raw.endswith(b"\n"):
                while (more := file.readline(LINE_CAP)) and not more.endswith(b"\n"):
                    pass  # the rest of an over-long line is not matched
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                return  # not text: ripgrep skips these too
            yield number, text.rstrip("\r\n")


def grep(spec: dict, deadline: float, out: list[str], notes: list[str]) -> None:
    try:
        regex = re.compile(spec["pattern"])
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        print(f"invalid pattern: {exc}")
        sys.exit(2)
    root, base, only = spec["root"], spec["base"], spec.get("glob")
    files = [root] if os.path.isfile(root) else walk(root, set(spec["skip"]), deadline)
    signal.signal(signal.SIGALRM, alarm)
    for path in files:
        if time.monotonic() > deadline:
            notes.append(f"[stopped after {spec['seconds']:g} s: the search took too long]")
            return
        if only and not fnmatch.fnmatch(os.path.basename(path), only):
            continue
        shown = relative(path, base)
        global armed
        armed = True
        signal.setitimer(signal.ITIMER_REAL, spec["file_seconds"])
        try:
            for number, text in lines_of(path):
                if regex.search(text):
                    out.append(f"{shown}:{number}:{text}")
                    print(out[-1], flush=True)
                    if len(out) >= spec["limit"]:
                        return
        except Slow:
            notes.append(
                f"[skipped {shown}: matching took more than {spec['file_seconds']:g} s "
                "(a pattern that backtracks; try a simpler one)]"
            )
        finally:
            armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)


def glob(spec: dict, deadline: float, out: list[str], notes: list[str]) -> None:
    root, base, pattern = spec["root"], spec["base"], spec["pattern"]
    for path in walk(root, set(spec["skip"]), deadline):
        rel = os.path.relpath(path, root)
        if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
            out.append(relative(path, base))
            print(out[-1], flush=True)
            if len(out) >= spec["limit"]:
                return
    if time.monotonic() > deadline:
        notes.append(f"[stopped after {spec['seconds']:g} s: the search took too long]")


def main(argv: list[str]) -> int:
    verb, spec = argv[1], json.loads(argv[2])
    deadline = time.monotonic() + spec["seconds"]
    out: list[str] = []
    notes: list[str] = []
    (grep if verb == "grep" else glob)(spec, deadline, out, notes)
    for note in notes:
        print(note)
    return 0 if out else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
