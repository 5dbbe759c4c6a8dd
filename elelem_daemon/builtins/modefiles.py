"""Mode files: the user's own modes, `NAME.md` in `~/.agents/modes/` and (trusted
folders only, trust.py) the project's `.agents/modes/`; the project's replace the
user's of the same name.

A file is front matter between `---` lines, then the prompt:

    ---
    description: Explain the code, change nothing
    tools: read, grep, glob, list
    ---
    You explain how the code works ...

`description` (one line), `name` (what pickers show; default: the file's name) and
`tools` (comma-separated or `[a, b]`: tool names, globs, `kind:KIND`; absent: every
tool) are the keys. Every file is read as hostile and bounded: at most MAX_FILES files
per folder, MAX_BYTES each, a name matching `modes.ID`, a plain file (no symlink, FIFO
or device: owned.py), UTF-8; a file that breaks a rule is left out with a problem
(`Modes.problems`, shown by `/mode` and in every face's mode listing), never an error.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..safety import vetted
from ..safety.owned import open_owned
from ..turns.modes import Mode, valid_id

MAX_FILES = 32
MAX_BYTES = 16 * 1024
MAX_TOOLS = 64
DESCRIPTION_CAP = 200
KEYS = ("description", "name", "tools")


def user_folder() -> Path:
    return Path.home() / ".agents" / "modes"


def project_folder(cwd: Path) -> Path:
    return Path(cwd) / ".agents" / "modes"


def listed(folder: Path, cap: int, what: str, suffix: str = "") -> tuple[list[str], list[str]]:
    """The sorted names in a folder of the user's files (those ending in `suffix`), at
    most `cap` of them, and a problem when it is unreadable or holds more."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(suffix))
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    except OSError as exc:
        return [], [f"{folder}: unreadable ({exc}); its {what} are skipped"]
    if len(names) > cap:
        return names[:cap], [f"{folder}: {len(names)} entries, only the first {cap} read"]
    return names, []


def load(folder: Path, source: str) -> tuple[list[Mode], list[str]]:
    """The modes of one folder, and a problem per file left out."""
    names, problems = listed(folder, MAX_FILES, "modes", ".md")
    modes = []
    record = vetted.load() if source == "user" else None
    for name in names:
        path = folder / name
        if record is not None and not vetted.approved(path, record):
            problems.append(f"{path}: {vetted.PROBLEM}")  # changed since approved
            continue
        try:
            modes.append(parse(path.stem, read(path), source))
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: {exc}; skipped")
    return modes, problems


def read(path: Path, limit: int = MAX_BYTES) -> str:
    """The file's text: a plain file of at most `limit` bytes, UTF-8."""
    fd = open_owned(path)
    try:
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None


def parse(stem: str, text: str, source: str) -> Mode:
    """A mode from a file's name and text; ValueError says what is wrong."""
    if not valid_id(stem):
        raise ValueError("a mode file's name is lower-case letters, digits, - and _ (32 at most)")
    fields, body = front_matter(text)
    tools = None
    if "tools" in fields:
        tools = tuple(t for t in fields["tools"].strip("[] ").replace(",", " ").split() if t)
        if len(tools) > MAX_TOOLS:
            raise ValueError(f"more than {MAX_TOOLS} tools")
    description = fields.get("description", "")
    name = fields.get("name", "") or stem
    if len(description) > DESCRIPTION_CAP or len(name) > 64:
        raise ValueError(f"a description is one line of at most {DESCRIPTION_CAP} characters")
    return Mode(stem, name, description, body.strip(), tools, source)


def front_matter(text: str, keys: tuple[str, ...] | None = KEYS) -> tuple[dict[str, str], str]:
    """The `key: value` lines between the opening and closing `---`, and the rest. With
    `keys` None any key is taken (a SKILL.md's `license`, `allowed-tools`, ...), and an
    indented line continues the value before it (YAML's `description: >` and the like)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("no front matter: the file must begin with a line `---`")
    try:
        end = next(n for n, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise ValueError("the front matter has no closing `---`") from None
    fields: dict[str, str] = {}
    last = None
    for number, line in enumerate(lines[1:end], 2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if keys is None and last is not None and line[:1].isspace():
            joined = f"{fields[last]} {line.strip()}" if fields[last] else line.strip()
            fields[last] = joined.strip("\"'")
            continue
        key, colon, value = line.partition(":")
        key = key.strip().lower()
        if not colon or (keys is not None and key not in keys):
            raise ValueError(f"line {number}: expected `KEY: value` with KEY one of {keys}")
        value = value.strip()
        fields[key] = "" if value in ("|", ">", "|-", ">-") else value.strip("\"'")
        last = key
    return fields, "\n".join(lines[end + 1 :])
