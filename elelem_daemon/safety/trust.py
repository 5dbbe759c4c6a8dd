"""Trust: whether a folder's own plugins, rules and MCP servers may load. One rule for
every face (docs/permissions.md, "Trusted folders").

A folder is untrusted until the user trusts it. What trust covers, in the session's
folder (`TRUSTABLE`): `.agents/plugins` (Python files the session runs),
`.agents/permissions` (rules, which may only tighten the user's anyway),
`.agents/modes`, `.agents/skills` (instructions the model follows) and `.mcp.json`
(servers the session starts). Untrusted, none of them
is loaded, and the face reports what it skipped (`Trust.skipped`). AGENTS.md is text,
not code: it is read either way (transcript.py).

The user's answer is kept in the trusted-folders file, `$XDG_CONFIG_HOME/elelem/trusted`
(`~/.config/elelem/trusted`): one absolute path per line (the folder as resolved:
symlinks followed), `#` comments and blank lines ignored. A folder's trust covers that
folder only, not its subfolders: a clone or a vendored package inside a trusted
repository brings its own plugins, and is asked about on its own. The file is in the
user's elelem folder, which is protected (protected.py): no tool writes it without a
question; and it is one of elelem's own files (owned.py), never read or appended to
through a symlink or hard link planted in its place (such a file trusts nothing).

How each face decides (`decide(cwd, said)`):
- `said` is what the client vouched: `True` (VS Code's workspace trust, ACP's
  `_meta.trusted`, the daemon's `trusted: true`) trusts the folder for this session;
  `False` does not, whatever the file says;
- `None` (the client said nothing): the trusted-folders file decides.
Then the terminal asks once when the folder has something to trust (`question`, after
the list of what it would load: trust_list.py), the ACP face asks with a form
(`elicitation/create`) when the client takes them and otherwise says once in the chat
how to trust it, and the daemon's client may call `session/trust`. Never through a
permission question: a client that approves every permission would answer it for the
user (issue 29). In every face the user may type `/trust` (builtins/commands.py) or
run `elelem trust` (cli.py). A yes is kept with `remember` (the form's "this session"
is not).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.config import config_dir
from ..base.errors import TrustNotKept
from .owned import open_owned

log = logging.getLogger(__name__)

TRUSTABLE = (
    ".agents/plugins",
    ".agents/permissions",
    ".agents/modes",
    ".agents/skills",
    ".mcp.json",
)
FILE_CAP = 1 << 20  # bytes of the trusted-folders file read, at most


def trusted_file() -> Path:
    return config_dir() / "trusted"


def folder_of(cwd: Path | str) -> Path:
    """The folder as the trusted-folders file names it: absolute, symlinks resolved."""
    return Path(cwd).expanduser().resolve()


def trustable(cwd: Path | str) -> list[Path]:
    """What the folder holds that only trust loads (TRUSTABLE, those present): the
    user's own `~/.agents/plugins` is not the project's, even with cwd at home."""
    folder = folder_of(cwd)
    user_plugins = (Path.home() / ".agents" / "plugins").resolve()
    found = []
    for name in TRUSTABLE:
        path = folder / name
        try:
            if name == ".agents/plugins":
                present = path.resolve() != user_plugins and any(path.glob("*.py"))
            elif name in (".agents/modes", ".agents/skills"):
                present = path.is_dir() and any(path.iterdir())
            else:
                present = path.is_file()
        except OSError:
            present = False
        if present:
            found.append(path)
    return found


def trusted_folders() -> list[Path]:
    """The folders in the trusted-folders file that the user confirmed (vetted.py: an
    entry written by anything but `remember` is held until confirmed)."""
    from . import vetted

    return vetted.trusted_approved(entries())


def entries() -> list[Path]:
    """The folders the trusted-folders file names (a missing or unreadable file: none)."""
    path = trusted_file()
    try:
        with open(open_owned(path), "rb") as file:  # never through a link (owned.py)
            text = file.read(FILE_CAP).decode("utf-8", "replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        log.warning("trust: %s is unreadable: %s; no folder is trusted", path, exc)
        return []
    folders = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and line.startswith("/"):
            folders.append(Path(line))
    return folders


def is_trusted(cwd: Path | str) -> bool:
    """Whether the trusted-folders file names this folder (itself, not a parent)."""
    folder = folder_of(cwd)
    return any(folder == known for known in trusted_folders())


def remember(cwd: Path | str) -> Path:
    """Add the folder to the trusted-folders file (once); return the file. TrustNotKept
    when it cannot be written (a link planted in its place, a read-only folder)."""
    folder, path = folder_of(cwd), trusted_file()
    if "\n" in str(folder) or is_trusted(folder):
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_owned(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)  # never through a link
    except OSError as exc:
        raise TrustNotKept(f"{folder} is not trusted: {exc}", path=str(path)) from None
    try:
        os.write(fd, f"{folder}\n".encode())  # one append: concurrent faces do not mix
    finally:
        os.close(fd)
    from . import vetted

    vetted.remembered(folder)  # elelem's own write: confirmed
    return path


TERMINAL_HOW = "trust it with `elelem trust` there or /trust in `elelem chat`, or add it to {}"
TYPED_HOW = "type /trust to trust it, run `elelem trust` there, or add it to {}"  # editors


@dataclass
class Trust:
    """A session's trust: its folder, whether it is trusted and why (`client`, `file`,
    `asked`, or `no`), and what was not loaded because it is not."""

    folder: Path
    trusted: bool
    source: str
    skipped: list[Path] = field(default_factory=list)
    loads: list[str] = field(default_factory=list)  # what trust would load (trust_list.py)

    def report(self) -> dict[str, Any]:
        """What `session/new` says of it (both editor faces)."""
        return {
            "folder": str(self.folder),
            "trusted": self.trusted,
            "skipped": [str(path) for path in self.skipped],
            "loads": list(self.loads),
        }

    def notice(self, how: str = TERMINAL_HOW) -> str | None:
        """One line when something was skipped (None otherwise), `how` saying how to
        trust it in this face."""
        if self.trusted or not self.skipped:
            return None
        names = ", ".join(str(p.relative_to(self.folder)) for p in self.skipped)
        return f"{self.folder} is not trusted: not loaded: {names} ({how.format(trusted_file())})"

    def listing(self) -> str:
        """What trust would load, one indented line each (every face's question)."""
        return "\n".join(f"  - {line}" for line in self.loads)


def decide(cwd: Path | str, said: bool | None = None) -> Trust:
    """The trust of a session in cwd, from what the client said, else the file."""
    folder = folder_of(cwd)
    if said is not None:
        trusted, source = said, "client" if said else "no"
    else:
        trusted = is_trusted(folder)
        source = "file" if trusted else "no"
    skipped = [] if trusted else trustable(folder)
    return Trust(folder, trusted, source, skipped, listed(folder, skipped))


def listed(folder: Path, skipped: list[Path]) -> list[str]:
    if not skipped:
        return []
    from .trust_list import loads  # only for a folder with something to trust

    return loads(folder, skipped)


def question(folder: Path) -> str:
    return f"Trust the plugins and rules in {folder}?"


def grant(session: Any, trust: Trust, keep: bool) -> Trust:
    """Trust a running session's folder now: its project files load (`/reload`), and,
    with `keep`, the folder is added to the trusted-folders file."""
    if keep:
        remember(trust.folder)
    trust.trusted, trust.source, trust.skipped, trust.loads = True, "asked", [], []
    session.project = True
    session.trust = trust
    session.reload()
    return trust
