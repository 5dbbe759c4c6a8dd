"""Excludes: what the shadow repository leaves out, written to its `info/exclude`.

git itself reads the project's `.gitignore` files inside the working directory. This
adds:

- every `.git`, the user's repository above all;
- the user's `.git/info/exclude` when it can be read (only a file read, never git);
- when the working directory is a subfolder of a repository, the patterns of the
  `.gitignore` files above it (and of `info/exclude`) that match at any depth (those
  without a `/` but a trailing one); anchored patterns there are relative to another
  folder and are dropped;
- nested repositories (a folder with its own `.git` below the working directory):
  their files belong to them and are left out whole.

Every file read is bounded (`READ_LIMIT`); a line with a NUL is dropped.
"""

from __future__ import annotations

from pathlib import Path

from ..base import regular
from ..base.repository import git_dir, repository_top

READ_LIMIT = 64 << 10
HEADER = "# written by elelem: never checkpointed\n.git\n"


def read(path: Path) -> list[str]:
    """The lines of a regular file (a fifo or a device is not waited on), bounded."""
    return regular.lines(path, READ_LIMIT)


def git_dir_of(top: Path) -> Path | None:
    """The repository folder of a working tree (base/repository.py), resolved."""
    found = git_dir(top)
    return found.resolve() if found is not None else None


def anywhere(line: str) -> bool:
    """A pattern that matches at any depth: no `/` except a trailing one."""
    text = line.strip()
    if not text or text.startswith("#"):
        return False
    return "/" not in text.lstrip("!").rstrip("/")


def patterns(cwd: Path, nested: list[str]) -> str:
    """The whole `info/exclude` text for the shadow of `cwd`."""
    lines = [HEADER]
    top = repository_top(cwd)
    if top is not None:
        info = git_dir_of(top)
        user = read(info / "info" / "exclude") if info else []
        if top == cwd:
            lines += ["# the user's .git/info/exclude\n", *(f"{line}\n" for line in user)]
        else:
            above = [line for line in user if anywhere(line)]
            folder = cwd.parent
            while True:
                above += [line for line in read(folder / ".gitignore") if anywhere(line)]
                if folder == top or folder.parent == folder:
                    break
                folder = folder.parent
            lines += ["# patterns from the repository above\n", *(f"{x.strip()}\n" for x in above)]
    if nested:
        lines += [
            "# nested repositories\n",
            *(f"/{literal(path.strip('/'))}/\n" for path in nested),
        ]
    return "".join(lines)


def literal(path: str) -> str:
    """A path as a gitignore pattern that matches only itself."""
    escaped = "".join("\\" + c if c in "*?[]\\" else c for c in path)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return escaped
