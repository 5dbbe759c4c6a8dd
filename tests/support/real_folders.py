"""The user's real elelem folders must come out of a test run as they went in.

Every suite runs with its own HOME / XDG_* folders; this is the check that they did.
`snapshot()` lists every file and folder under the real state, config and plugin
folders (path -> kind, size, mtime); `changes(before, after)` names what differs.

tests/conftest.py checks around the pytest session; bin/test checks around each suite:

    python tests/support/real_folders.py save FILE          # before
    python tests/support/real_folders.py check FILE NAME    # after: exit 1 naming what NAME changed

And bin/test runs the Python suites with XDG_CONFIG_HOME, XDG_STATE_HOME and
XDG_DATA_HOME set to fresh, empty folders of its own, and fails if anything appears in
them (issue 36): a test that hands its caller's XDG_* to a process it starts (a
module-scoped fixture runs before the per-test folders exist) writes there, on every
machine, CI's included, not only on one whose desktop sets XDG_CONFIG_HOME:

    python tests/support/real_folders.py fresh COMMAND ARGS...   # exit 1 if they filled

`own(home)` is the environment every process a test starts gets: HOME and each
XDG_* folder under `home`, and no ELELEM_STATE_DIR from outside.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

MAX_ENTRIES = 100_000  # a snapshot stops listing past this (and says so)
Entry = list[int | str]
XDG = {  # every XDG_* folder elelem, git or a command it runs may read, under a HOME
    "XDG_CONFIG_HOME": ".config",
    "XDG_STATE_HOME": ".local/state",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CACHE_HOME": ".cache",
}
FRESH = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")  # bin/test's own, checked


def own(home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a process a test starts: `base` (os.environ) with HOME and
    every XDG_* folder under `home`, and no ELELEM_STATE_DIR."""
    env = {k: v for k, v in (os.environ if base is None else base).items()}
    env.pop("ELELEM_STATE_DIR", None)
    env["HOME"] = str(home)
    env.update({name: str(home / leaf) for name, leaf in XDG.items()})
    return env


def filled(roots: list[Path]) -> list[str]:
    """What appeared under folders that were empty: one line each, at most 50."""
    found = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            found += [os.path.join(folder, name) for name in [*dirs, *files]]
    return sorted(found)[:50]


def fresh(command: list[str]) -> int:
    """Run command with FRESH set to new empty folders; 1 if anything appeared in them
    (else the command's own exit status)."""
    with tempfile.TemporaryDirectory(prefix="elelem-xdg-") as top:
        roots = {name: Path(top) / name.lower() for name in FRESH}
        for root in roots.values():
            root.mkdir()
        env = {**os.environ, **{name: str(root) for name, root in roots.items()}}
        status = subprocess.run(command, env=env).returncode
        found = filled(list(roots.values()))
        if not found:
            return status
        print(f"{' '.join(command)} wrote into the run's own XDG folders:", file=sys.stderr)
        for line in found:
            print(f"  {line}", file=sys.stderr)
        print("  (a process a test starts must get its own HOME and XDG_*: own())", file=sys.stderr)
        return 1


def homes(env: dict[str, str] | None = None) -> list[Path]:
    """$HOME, and the account's home from the password database if that differs."""
    env = os.environ if env is None else env
    found = [Path(env["HOME"])] if env.get("HOME") else []
    try:
        found.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    except KeyError:
        pass
    return list(dict.fromkeys(found))


def folders(env: dict[str, str] | None = None) -> list[Path]:
    """Where elelem keeps the user's state, config and plugins, by env and by default."""
    env = os.environ if env is None else env
    found: list[Path] = []
    for name, leaf in (("ELELEM_STATE_DIR", ""), ("XDG_STATE_HOME", "elelem")):
        if env.get(name):
            found.append(Path(env[name]) / leaf if leaf else Path(env[name]))
    if env.get("XDG_CONFIG_HOME"):
        found.append(Path(env["XDG_CONFIG_HOME"]) / "elelem")
    for home in homes(env):
        found += [home / ".local/state/elelem", home / ".config/elelem", home / ".agents"]
    return list(dict.fromkeys(p.expanduser().absolute() for p in found))


def snapshot(env: dict[str, str] | None = None) -> dict[str, Entry]:
    """Every entry under the folders: path -> [kind, size, mtime_ns]; absent folders too."""
    entries: dict[str, Entry] = {}
    for folder in folders(env):
        if not os.path.lexists(folder):
            entries[str(folder)] = ["absent", 0, 0]
            continue
        for root, dirs, files in os.walk(folder):
            for name in [*dirs, *files]:
                path = os.path.join(root, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                kind = "dir" if name in dirs else "file"
                entries[path] = [kind, info.st_size if kind == "file" else 0, info.st_mtime_ns]
                if len(entries) >= MAX_ENTRIES:
                    entries["..."] = ["truncated", 0, 0]
                    return entries
            entries[root] = ["dir", 0, os.lstat(root).st_mtime_ns]
    return entries


def changes(before: dict[str, Entry], after: dict[str, Entry]) -> list[str]:
    """One line per path that appeared, disappeared or changed."""
    lines = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if old is None or (old[0] == "absent" and new is not None):
            lines.append(f"created  {path}")
        elif new is None or new[0] == "absent":
            lines.append(f"removed  {path}")
        else:
            lines.append(f"changed  {path}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "fresh":
        return fresh(argv[1:])
    if len(argv) >= 2 and argv[0] == "save":
        Path(argv[1]).write_text(json.dumps(snapshot()))
        return 0
    if len(argv) >= 2 and argv[0] == "check":
        before = json.loads(Path(argv[1]).read_text())
        found = changes(before, snapshot())
        if not found:
            return 0
        who = argv[2] if len(argv) > 2 else "the tests"
        print(f"{who} changed the user's real elelem folders:", file=sys.stderr)
        for line in found[:50]:
            print(f"  {line}", file=sys.stderr)
        if len(found) > 50:
            print(f"  ... and {len(found) - 50} more", file=sys.stderr)
        print("  (every suite must set its own HOME and XDG_* folders)", file=sys.stderr)
        return 1
    print(
        "usage: real_folders.py save FILE | check FILE [NAME] | fresh COMMAND...", file=sys.stderr
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
