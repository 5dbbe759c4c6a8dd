"""Vetted: the user's own files that decide what runs, each as the user last approved
it (docs/plugins.md, "Held files"). A file new or changed since is held: no session
loads it until the user confirms, whoever changed it (a command's detached child
escapes any comparison around one call, so the check is made when a file loads).

What is watched (`watched`): the user's plugins (`~/.agents/plugins/*.py`), skills
(every file under `~/.agents/skills/NAME/`), modes (`~/.agents/modes/*.md`), rules
(`$XDG_CONFIG_HOME/elelem/permissions`), MCP servers (`.../elelem/mcp.json`) and the
trusted-folders file (`.../elelem/trusted`), whose entries are vetted one by one: an
entry written by anything but elelem's own `remember` is not trusted until confirmed.

The record is `state_dir()/vetted.json`: `{"files": {PATH: {"sha256", "size"}},
"trusted": [FOLDER, ...]}`, written whole (a temporary file, then `os.replace`; 0600).
With no record yet (the first run after this change) what is there now is recorded
and approved, and one line on stderr says so (when there was something to record).
A record that is there but unreadable (not JSON, a link planted in its place)
approves nothing. Two processes approving at once may
lose one approval (the last write wins): that file is asked about again, never loaded
unasked.

Every file is hostile: where they are, how they are listed (bounded) and read (a FIFO
never hangs a start) is watched.py.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.config import config_dir, state_dir
from ..base.log import notice
from .owned import read_owned, replace
from .watched import digest, read_bytes, tree, watched

log = logging.getLogger(__name__)

RECORD_CAP = 4 << 20  # bytes of the record read, at most
APPROVE = "elelem trust --user-files"  # the command that confirms them, in a terminal
LOAD, HOLD = "load", "hold"
PROBLEM = "new or changed since you approved it: held (type /trust files to load it)"
OPTIONS = [HOLD, LOAD]  # a question answered with its first choice loads nothing


@dataclass(frozen=True)
class HeldFile:
    """One file held: `what` is `new` or `changed`, `size` its bytes now, `sha256`
    what was shown (approving it records that, not what the file holds later);
    for the trusted-folders file, `entries` are the folders not yet confirmed."""

    path: Path
    what: str
    size: int
    sha256: str
    kind: str
    entries: tuple[str, ...] = field(default=())

    def line(self) -> str:
        """One line, control characters escaped and cut (trust_list.py): a file's name
        is shown, never obeyed."""
        from .trust_list import ITEMS_CAP, cut  # only when something is held

        extra = f": {', '.join(self.entries[:ITEMS_CAP])}" if self.entries else ""
        return cut(f"{self.what} {self.kind}: {self.path} ({self.size} bytes){extra}")

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "path": str(self.path), "change": self.what, "size": self.size, "kind": self.kind
        }  # fmt: skip
        if self.entries:
            found["entries"] = list(self.entries)
        return found


def record_file() -> Path:
    return state_dir() / "vetted.json"


def trusted_path() -> Path:
    return config_dir() / "trusted"


def read_if_approved(path: Path, record: dict[str, Any] | None = None) -> bytes | None:
    """The bytes of path if they are the ones the user approved, else None: what a
    loader runs is what was hashed, never a file swapped in after the check."""
    data = read_bytes(path)
    if data is None:
        return None
    known = (record if record is not None else load())["files"].get(str(path))
    if not isinstance(known, dict) or known.get("sha256") != hashlib.sha256(data).hexdigest():
        return None
    return data


# -- the record ---------------------------------------------------------------------
def load() -> dict[str, Any]:
    """The record; on the first run (none yet) what is there now, recorded."""
    path = record_file()
    try:
        raw = read_owned(path, RECORD_CAP)[0]
    except FileNotFoundError:
        return baseline()
    except OSError as exc:
        log.warning("vetted: %s is unreadable (%s): every user file is held", path, exc)
        return {"files": {}, "trusted": []}
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        record = None
    if not isinstance(record, dict):
        log.warning("vetted: %s is not a record: every user file is held", path)
        return {"files": {}, "trusted": []}
    if not isinstance(record.get("files"), dict):
        record["files"] = {}
    if not isinstance(record.get("trusted"), list):
        record["trusted"] = []
    return record


def baseline() -> dict[str, Any]:
    """The first run: approve what is there now, and say so once."""
    files = {}
    for path, _kind in watched():
        if (found := digest(path)) is not None:
            files[str(path)] = {"sha256": found[0], "size": found[1]}
    record = {"files": files, "trusted": trusted_entries()}
    if save(record) and files:  # nothing to approve: nothing to say
        notice(
            f"elelem: recorded {len(files)} of your files that decide what runs "
            f"(plugins, skills, modes, rules, MCP servers) in {record_file()}: "
            "from now on a new or changed one is held until you confirm it"
        )
    return record


def save(record: dict[str, Any]) -> bool:
    path = record_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace(path, json.dumps(record, indent=1, sort_keys=True).encode())
        return True
    except OSError as exc:
        log.warning("vetted: %s could not be written: %s", path, exc)
        return False


def trusted_entries() -> list[str]:
    """The folders named in the trusted-folders file, as written (trust.py reads it)."""
    from .trust import entries  # trust imports this module: the file is read there

    return [str(folder) for folder in entries()]


# -- what is held -------------------------------------------------------------------
def held() -> list[HeldFile]:
    """Every watched file new or changed since the user approved it, and the trusted
    folders not confirmed."""
    record = load()
    known = record["files"]
    found = []
    for path, kind in watched():
        now = digest(path)
        before = known.get(str(path))
        sha, size = now if now is not None else ("", _size(path))
        if isinstance(before, dict) and now is not None and before.get("sha256") == sha:
            continue
        found.append(HeldFile(path, "changed" if before else "new", size, sha, kind))
    approved = set(record["trusted"])
    extra = tuple(e for e in dict.fromkeys(trusted_entries()) if e not in approved)
    if extra:
        path = trusted_path()
        found.append(HeldFile(path, "changed", _size(path), "", "trusted folders", extra))
    return found


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def approved(path: Path, record: dict[str, Any] | None = None) -> bool:
    """Whether the file is as the user approved it."""
    known = (record if record is not None else load())["files"].get(str(path))
    now = digest(path)
    return isinstance(known, dict) and now is not None and known.get("sha256") == now[0]


def approved_tree(folder: Path, record: dict[str, Any] | None = None) -> bool:
    """Whether every file under a skill's folder is as the user approved it."""
    record = record if record is not None else load()
    return all(approved(path, record) for path in tree(folder))


def trusted_approved(folders: list[Path]) -> list[Path]:
    """The trusted folders the user confirmed (or elelem itself wrote)."""
    approved_ = set(load()["trusted"])
    return [folder for folder in folders if str(folder) in approved_]


def approve(files: list[HeldFile]) -> list[HeldFile]:
    """Record what the user saw and confirmed: each file's digest as shown (a file
    changed since stays held), each trusted folder listed. Returns them."""
    record = load()
    for item in files:
        if item.entries:
            record["trusted"] = list(dict.fromkeys([*record["trusted"], *item.entries]))
        elif item.sha256:
            record["files"][str(item.path)] = {"sha256": item.sha256, "size": item.size}
    save(record)
    return files


def remembered(folder: Path) -> None:
    """elelem's own write to the trusted-folders file (trust.remember): confirmed."""
    record = load()
    if str(folder) not in record["trusted"]:
        record["trusted"].append(str(folder))
        save(record)


def question(files: list[HeldFile]) -> str:
    """Every face's question: what changed, one line each, then `Load them?`."""
    from .trust_list import ITEMS_CAP

    lines = "\n".join(f"  - {item.line()}" for item in files[:ITEMS_CAP])
    if len(files) > ITEMS_CAP:
        lines += f"\n  - and {len(files) - ITEMS_CAP} more"
    return (
        "These files of yours decide what runs in a session, and are new or changed "
        f"since you last approved them; they are held (not loaded):\n{lines}\nLoad them?"
    )


def notice_line(files: list[HeldFile], how: str) -> str:
    """The one line when no question can be asked (`how`: this face's way to confirm)."""
    from .trust_list import ITEMS_CAP

    names = "; ".join(item.line() for item in files[:ITEMS_CAP])
    return f"held, not loaded (new or changed since you approved them): {names}; {how}"
