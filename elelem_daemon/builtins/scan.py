"""The pure-Python `grep` and `glob`, run as a child process (standard library only):
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

Fast paths (issue 22), each answering exactly what the plain walk answered
(tests/builtin/test_search_equivalence.py compares them with the old walk): paths
relative to the root are built as the walk goes (no `relpath` per file); a glob is
compiled once; a file of at most SMALL bytes is read in one `read` and split in
memory; and when the pattern needs a literal run of characters (the longest run of
literals at its top level, no IGNORECASE: `return 4242$` needs `return 4242`), a file
whose bytes do not contain it is not matched line by line at all.
"""

from __future__ import annotations

import collections
import fnmatch
import itertools
import json
import os
import queue
import re
import signal
import stat
import sys
import threading
import time

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # after the standard library
import listed  # type: ignore[import-not-found]  # noqa: E402  (this folder: run as a script)

LINE_CAP = 1 << 20
SMALL = 1 << 16  # read in one go; larger files are read line by line
READERS, BATCH, AHEAD = 3, 64, 8  # threads fetching files ahead of the matching
TICK = 0.05  # how often the per-file matching time is checked (a timer signal)


class Slow(Exception):
    pass


class Late(Exception):
    pass


until = 0.0  # while a file is matched: the moment its matching must end (0: none)


def alarm(*_: object) -> None:
    if until and time.monotonic() > until:
        raise Slow


def walk(root: str, skip: set[str], deadline: float):
    """(path, path relative to root) of the regular files under root, sorted per
    folder, files before subfolders, not through symlinks."""
    todo = [(root, "")]
    while todo:
        if time.monotonic() > deadline:
            return
        folder, prefix = todo.pop()
        try:
            with os.scandir(folder) as found:
                entries = sorted(found, key=lambda e: e.name)
        except OSError:
            continue
        subfolders = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in skip:
                        subfolders.append((entry.path, prefix + entry.name + os.sep))
                elif entry.is_file(follow_symlinks=False):
                    yield entry.path, prefix + entry.name
            except OSError:
                continue
        todo.extend(reversed(subfolders))


relative = listed.relative


needed, encoded = listed.needed, listed.encoded


BIG = b""  # fetch's answer for a file to be read line by line


def fetch(path: str, literal: bytes | None) -> bytes | None:
    """What matching needs of a file (run by the readers, off the main thread): None to
    skip it (not a regular file, unreadable, binary, or without `literal`), all its bytes
    when it has at most SMALL, else BIG."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size <= SMALL:
            want = info.st_size + 1
            data = os.read(fd, want)
            if len(data) < want:  # the whole file
                if b"\0" in data[:8192] or (literal is not None and literal not in data):
                    return None
                return data or None
        return BIG  # it grew, or tells no size: read as it comes
    except OSError:
        return None
    finally:
        os.close(fd)


def lines_of(path: str, fetched: bytes):
    """(number, text) of each line of a fetched file."""
    if fetched is not BIG:
        yield from split(fetched)
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return
    with open(fd, "rb") as file:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            yield from streamed(file)


def split(data: bytes):
    pieces = data.split(b"\n")
    if not pieces[-1]:
        pieces.pop()
    for number, raw in enumerate(pieces, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return  # not text: ripgrep skips these too
        yield number, text.rstrip("\r\n")


def streamed(file):  # noqa: ANN001
    """The lines of a file too large for one read (the plain path)."""
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


class Readers:
    """Threads that fetch files ahead of the matching, BATCH at a time, at most AHEAD
    batches in flight (so at most AHEAD × BATCH × SMALL bytes held): the system calls
    of opening and reading, which release the GIL, overlap each other and the walk.
    The answers come back in the walk's order. Daemon threads: a read that never
    returns holds no one past the search's time limit."""

    def __init__(self, files, literal: bytes | None, count: int = READERS) -> None:  # noqa: ANN001
        self.files, self.literal = files, literal
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.pending: collections.deque = collections.deque()
        for _ in range(count):
            threading.Thread(target=self.work, daemon=True).start()

    def work(self) -> None:
        while True:
            batch, answers, done = self.jobs.get()
            for path, _ in batch:
                try:
                    answers.append(fetch(path, self.literal))
                except Exception:  # noqa: BLE001  (a file this cannot fetch is skipped)
                    answers.append(None)
            done.set()

    def fill(self) -> None:
        while len(self.pending) < AHEAD:
            batch = list(itertools.islice(self.files, BATCH))
            if not batch:
                return
            job: tuple[list, list, threading.Event] = (batch, [], threading.Event())
            self.jobs.put(job)
            self.pending.append(job)

    def answers(self, deadline: float):
        """((path, rel), fetched) in the walk's order; Late when the time is up."""
        while True:
            self.fill()
            if not self.pending:
                return
            batch, answers, done = self.pending.popleft()
            while not done.wait(TICK):
                if time.monotonic() > deadline:
                    raise Late
            yield from zip(batch, answers, strict=True)


def grep(spec: dict, deadline: float, out: list[str], notes: list[str]) -> None:
    try:
        regex = re.compile(spec["pattern"])
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        print(f"invalid pattern: {exc}")
        sys.exit(2)
    root, base, seconds = spec["root"], spec["base"], spec["file_seconds"]
    only = re.compile(fnmatch.translate(spec["glob"])).match if spec.get("glob") else None
    literal = encoded(needed(regex))
    stopped = f"[stopped after {spec['seconds']:g} s: the search took too long]"
    found = None
    if os.path.isfile(root):
        files = iter([(root, os.path.basename(root))])
    elif (
        literal and (found := listed.containing(root, spec["skip"], literal, deadline)) is not None
    ):
        found.sort(key=listed.order)
        files = ((os.path.join(root, rel), rel) for rel in found)
    elif time.monotonic() > deadline:
        notes.append(stopped)
        return
    else:
        files = walk(root, set(spec["skip"]), deadline)
    if only:
        files = ((path, rel) for path, rel in files if only(rel.rpartition(os.sep)[2]))
    if found is not None:  # a few files, each holding the literal: read them in turn
        fetched = (((path, rel), fetch(path, literal)) for path, rel in files)
    else:
        fetched = Readers(files, literal).answers(deadline)
    search = regex.search
    global until
    signal.signal(signal.SIGALRM, alarm)
    tick = min(TICK, seconds / 4)
    signal.setitimer(signal.ITIMER_REAL, tick, tick)
    try:
        for (path, _), data in fetched:
            if time.monotonic() > deadline:
                notes.append(stopped)
                return
            if data is None:
                continue
            until = time.monotonic() + seconds
            try:
                for number, text in lines_of(path, data):
                    if search(text):
                        out.append(f"{relative(path, base)}:{number}:{text}")
                        print(out[-1], flush=True)
                        if len(out) >= spec["limit"]:
                            return
            except Slow:
                notes.append(
                    f"[skipped {relative(path, base)}: matching took more than "
                    f"{seconds:g} s (a pattern that backtracks; try a simpler one)]"
                )
            finally:
                until = 0.0
    except Late:
        notes.append(stopped)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def glob(spec: dict, deadline: float, out: list[str], notes: list[str]) -> None:
    root, base = spec["root"], spec["base"]
    match, literal = listed.glob_pattern(spec["pattern"])
    stopped = f"[stopped after {spec['seconds']:g} s: the search took too long]"
    found = listed.files(root, spec["skip"], deadline, literal) if os.path.isdir(root) else None
    if found is not None:
        out.extend(listed.globbed(found, match, literal, root, base, spec["limit"]))
        if out:
            print("\n".join(out), flush=True)
        return
    if time.monotonic() > deadline:
        notes.append(stopped)
        return
    for path, rel in walk(root, set(spec["skip"]), deadline):
        if listed.glob_match(match, rel):
            out.append(relative(path, base))
            print(out[-1], flush=True)
            if len(out) >= spec["limit"]:
                return
    if time.monotonic() > deadline:
        notes.append(stopped)


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
