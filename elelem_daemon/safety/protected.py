"""Protected paths: the files whose content decides what runs later, or what the next
session believes. A model that writes one silently has planted code (a git hook, a
plugin, a shell rc file) or instructions (AGENTS.md) for later.

`protected(path)` says why a *resolved* path (symlinks and `..` followed, as the file
tools resolve it) is protected, or None. Names are compared case-insensitively,
whatever the file system: on macOS or Windows `.GIT/Config` is `.git/config`, and
asking once too often on Linux costs one question. The set (docs/permissions.md):

- anywhere, a path through a folder named `.agents` (plugins, rules, modes), `.git`
  (config, hooks, info: `core.fsmonitor`, `hooks/pre-commit` run on the next git
  command), `.vscode` (tasks and settings an editor runs), or `.ssh`;
- anywhere, a file named `AGENTS.md` (the system prompt), `.envrc` (direnv runs it),
  `.mcp.json` (servers a session starts), `.gitconfig`, or a shell's start-up file
  (`.bashrc`, `.bash_profile`, `.bash_login`, `.bash_logout`, `.profile`, `.zshrc`,
  `.zshenv`, `.zprofile`, `.zlogin`, `.zlogout`, `.cshrc`, `.tcshrc`, `.kshrc`,
  `.inputrc`);
- the user's elelem folders: `$XDG_CONFIG_HOME/elelem` (permissions, the trusted
  folders, mcp.json, config.toml) and elelem's state folder (stored sessions,
  checkpoints); and `~/.config/git`, `~/.config/fish` (`~/.agents` is a `.agents`).

The permission policy (builtins/permissions.py) asks before every `write` or `edit`
(any tool of kind edit, delete or move with a `path`) to a protected path, whatever
the rules say; an `always` answer does not cover them, and no "approve all" setting
answers the question (it is `user_only`: over ACP a form, else refused unasked).

`execute` is a shell: a command the user allowed can write anything its user can.
What is cheap is to notice: `snapshot(cwd)` stats the protected files that matter most
(the folder's `.git/config`, `.git/hooks`, `.git/info`, `.agents`, `.vscode`,
AGENTS.md, `.envrc`, `.mcp.json`; the home folder's shell rc files, `.gitconfig`,
`.ssh`, `.agents`, `~/.config/git`, the elelem settings), at most WATCH_CAP entries,
before and after each command, and `changes` names what a command created, changed
or removed there, for the model and the user to see. It does not prevent, and it
cannot see a change undone before the command ended, nor one made later by a process
that escaped the command's process group.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FOLDERS = frozenset({".agents", ".git", ".vscode", ".ssh"})
FILES = frozenset(
    {
        "agents.md",
        ".envrc",
        ".mcp.json",
        ".gitconfig",
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".cshrc",
        ".tcshrc",
        ".kshrc",
        ".inputrc",
    }
)


def folders() -> list[tuple[Path, str]]:
    """The protected folders of this user, resolved, each with what it holds."""
    from ..base.config import config_dir, state_dir

    settings = config_dir()
    found = [
        (settings, "elelem's settings: permissions, trusted folders, MCP servers"),
        (state_dir(), "elelem's stored sessions and checkpoints"),
        (settings.parent / "git", "git's settings"),
        (settings.parent / "fish", "fish's start-up files"),
    ]
    resolved = []
    for folder, what in found:
        try:
            resolved.append((folder.resolve(), what))
        except (OSError, RuntimeError):
            continue
    return resolved


def protected(path: Path) -> str | None:
    """Why the resolved path is protected, or None."""
    parts = [part.casefold() for part in path.parts]
    for part in parts[:-1]:
        if part in FOLDERS:
            return f"it is inside a {part} folder"
    if parts and parts[-1] in FOLDERS:
        return f"it is a {parts[-1]} folder"
    if parts and parts[-1] in FILES:
        return f"{path.name} decides what runs or what the agent is told later"
    for folder, what in folders():
        if _inside(parts, folder):
            return f"it is inside {folder} ({what})"
    return None


def _inside(parts: list[str], folder: Path) -> bool:
    root = [part.casefold() for part in folder.parts]
    return parts[: len(root)] == root


# -- what a command changed ------------------------------------------------------------
WATCH_CAP = 400  # entries stat'ed per snapshot, at most
Stamp = tuple[int, int, int, int]  # inode, size, mtime (ns), mode


def snapshot(cwd: Path) -> dict[str, Stamp]:
    """The stamps of the protected files most worth watching (see the docstring)."""
    from ..base.config import config_dir

    home = Path.home()
    found: dict[str, Stamp] = {}
    places: list[tuple[Path, int]] = [  # (path, how deep to look into it)
        *((cwd / name, 0) for name in ("AGENTS.md", ".envrc", ".mcp.json")),
        (cwd / ".git" / "config", 0),
        (cwd / ".git" / "hooks", 1),
        (cwd / ".git" / "info", 1),
        (cwd / ".agents", 3),
        (cwd / ".vscode", 2),
        *((home / name, 0) for name in sorted(FILES) if name.startswith(".")),
        (home / ".ssh", 1),
        (home / ".agents", 3),
        (config_dir(), 2),
        (config_dir().parent / "git", 1),
    ]
    for place, depth in places:
        _stamp(place, depth, found)
        if len(found) >= WATCH_CAP:
            break
    return found


def _stamp(path: Path, depth: int, found: dict[str, Stamp]) -> None:
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return
    found[str(path)] = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)
    if depth <= 0 or not stat.S_ISDIR(info.st_mode):
        return
    try:
        names = sorted(os.listdir(path))[:WATCH_CAP]
    except OSError:
        return
    for name in names:
        if len(found) >= WATCH_CAP:
            return
        _stamp(path / name, depth - 1, found)


def changes(before: dict[str, Stamp], after: dict[str, Stamp]) -> list[str]:
    """`PATH (created|changed|removed)` for each protected file that differs."""
    out = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old == new or (old and new and stat.S_ISDIR(old[3]) and stat.S_ISDIR(new[3])):
            continue  # a folder's own stamp moves with its entries, which are listed
        out.append(
            f"{path} ({'created' if old is None else 'removed' if new is None else 'changed'})"
        )
    return out
