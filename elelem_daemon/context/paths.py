"""Paths: the files under a working directory, for `@` completion and folder listings.

`index(cwd)` is the one PathIndex of a folder (the last INDEXES folders are kept).
Its listing is git's or a walk's (listing.py: `.gitignore` honoured in a git tree).

Freshness: a listing is trusted for TTL seconds (or 4 times what making it took, if
longer), and only while git's index file keeps its mtime (`git add`, a checkout, a
commit change it). A completion after that
is answered from the listing it has while a new one is made in a background thread
(one at a time), so after the first listing no completion waits for git or a walk.

`complete(word)` never blocks the event loop's thread: there, before the first
listing, it answers from the one folder the word names (a bounded `scandir`) and
starts the listing; a face that wants the index from the first completion awaits
`ready()` first. In any other thread (the terminal's line reader) it waits for it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from . import listing as sources
from .listing import COMPLETIONS, Listing, outside, scan_complete

TTL = 5.0
INDEXES = 8


class PathIndex:
    def __init__(
        self, cwd: Path, ttl: float = TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.cwd = Path(cwd)
        self.ttl = ttl
        self.clock = clock
        self.listing: Listing | None = None
        self.loads = 0  # how many listings were made (for tests and the bench)
        self._lock = threading.Lock()  # held while a listing is made
        self._loaded_at = 0.0
        self._cost = 0.0  # seconds the last listing took
        self._git_index: Path | None = None
        self._index_mtime: float | None = None

    # -- the listing --------------------------------------------------------------
    def wait(self) -> Listing:
        """The listing, made now (blocking) if there is none yet."""
        listing = self.listing
        if listing is not None:
            return listing
        with self._lock:
            if self.listing is None:
                self._load()
            assert self.listing is not None
            return self.listing

    async def ready(self) -> Listing:
        """The listing, made in a thread if there is none yet; a stale one is renewed
        in the background."""
        if self.listing is None:
            return await asyncio.to_thread(self.wait)
        return self.current()

    def current(self) -> Listing:
        """The listing there is (waiting for the first one), renewed in the background
        when stale."""
        listing = self.wait()
        if not self.fresh():
            self.renew()
        return listing

    def fresh(self) -> bool:
        if self.listing is None or self.clock() - self._loaded_at >= self.trusted():
            return False
        return self._git_index is None or _mtime(self._git_index) == self._index_mtime

    def renew(self) -> None:
        """Make a new listing in a background thread, unless one is being made."""

        def work() -> None:
            if not self._lock.acquire(blocking=False):
                return
            try:
                self._load()
            finally:
                self._lock.release()

        if not self._lock.locked():
            threading.Thread(target=work, name="elelem-paths", daemon=True).start()

    def _load(self) -> None:
        started = self.clock()
        found = sources.git_files(self.cwd)
        if found is not None:
            files, truncated, self._git_index = found
            self._index_mtime = _mtime(self._git_index) if self._git_index else None
            listing = Listing(files, "git", truncated)
        else:
            self._git_index = self._index_mtime = None
            files, truncated = sources.walk(self.cwd)
            listing = Listing(files, "walk", truncated)
        self.listing, self._loaded_at = listing, self.clock()
        self._cost = self._loaded_at - started
        self.loads += 1

    def trusted(self) -> float:
        """Seconds a listing is trusted: TTL, or 4 times what the last one took, so a
        tree that takes long to list is not listed over and over."""
        return max(self.ttl, 4 * self._cost)

    # -- completion -----------------------------------------------------------------
    def complete(self, word: str, limit: int = COMPLETIONS, anywhere: bool = False) -> list[str]:
        """Paths under cwd completing word (see Listing.complete); see the module
        docstring for when this waits."""
        if self.listing is None and _on_event_loop():
            self.renew()
            return scan_complete(self.cwd, word, limit)
        return self.current().complete(word, limit, anywhere)


def complete_word(word: str, cwd: Path, limit: int = COMPLETIONS) -> list[str]:
    """Completions of the last word of a prompt line: paths relative to cwd from its
    index; `@word` gives `@path`s, with files anywhere whose name starts with the word
    after the folder's own entries. A bare word outside the index (absolute, `~`, `..`)
    is completed from its folder on disk; an `@` word there is no mention: nothing."""
    mark = "@" if word.startswith("@") else ""
    bare = word[len(mark) :]
    if outside(bare):
        return [] if mark else scan_complete(cwd, bare, limit)
    return [mark + path for path in index(cwd).complete(bare, limit, anywhere=bool(mark))]


# -- one index per folder -----------------------------------------------------------
_indexes: OrderedDict[str, PathIndex] = OrderedDict()
_indexes_lock = threading.Lock()


def index(cwd: Path | str) -> PathIndex:
    """The PathIndex of cwd, shared by every session there."""
    key = str(Path(cwd).resolve())
    with _indexes_lock:
        found = _indexes.get(key)
        if found is None:
            found = _indexes[key] = PathIndex(Path(key))
            while len(_indexes) > INDEXES:
                _indexes.popitem(last=False)
        _indexes.move_to_end(key)
        return found


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
