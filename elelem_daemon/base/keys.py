"""Keys: provider keys and other secrets live here, not in the process environment.

`take()` runs first thing in every face (`elelem daemon`, `--acp`, `chat`, `ask`).
It moves each variable whose name looks secret (`secret()`) out of `os.environ`
(so out of the C environment, which child processes inherit) into a private dict,
and wipes its `NAME=VALUE` bytes from the memory block that `/proc/PID/environ`
shows: that file reads the process's *original* environment block (between
`env_start` and `env_end`, fields 50-51 of `/proc/self/stat`), which `unsetenv`
does not touch. So no `/proc/*/environ` of the daemon or of its children holds a key.

Readers:
- `get(name)`: a provider's key (the environment first, for a key set after start-up,
  then the store, then the sign-in of `elelem login`: signin.py); `/provider`
  switching builds providers later and still finds them;
- `environ()`: the environment as it was, keys included (provider selection);
- `tool_env()`: the environment a tool process gets: no secret (by name or, for a URL
  with a password, by value: `secret()`), unless the user kept
  it with `ELELEM_TOOL_ENV_KEEP=NAME,NAME` (names or shell patterns such as `AWS_*`)
  or kept all of them with `ELELEM_TOOL_ENV_KEEP_KEYS=1`;
- `values()`: every secret value, for redaction.

`guard()` (called before the first tool process starts) marks the daemon not
dumpable (`PR_SET_DUMPABLE 0`), so another process of the same user cannot read its
memory (`/proc/PID/mem`, ptrace) and with it the keys; root still can.
`ELELEM_DUMPABLE=1` leaves it attachable, for a debugger (py-spy, gdb).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

# The names that look secret (case does not matter): these endings, anything with
# SECRET or PASSWORD in it, and these whole names; and any variable whose value is a
# URL carrying a password (`postgres://user:pw@host/db`), whatever its name (docs/
# permissions.md, The keys). Matched with str methods: no regex at start-up.
SECRET_ENDINGS = (
    "_KEY",  # MY_SERVICE_KEY, *_API_KEY, *_PRIVATE_KEY, *_ACCESS_KEY
    "_APIKEY",
    "_TOKEN",  # GITHUB_TOKEN, HF_TOKEN, AWS_SESSION_TOKEN, AWS_SECURITY_TOKEN
    "_PASSWD",
    "_ACCESS_KEY_ID",  # AWS_ACCESS_KEY_ID
    "_CREDENTIALS",
)
SECRET_PARTS = ("SECRET", "PASSWORD")  # AWS_SECRET_ACCESS_KEY, PGPASSWORD, MYSQL_PWD_PASSWORD
SECRET_NAMES = ("TOKEN", "APIKEY", "PASSWD")
KEEP = "ELELEM_TOOL_ENV_KEEP"
KEEP_ALL = "ELELEM_TOOL_ENV_KEEP_KEYS"

_store: dict[str, str] = {}
_taken = False
_guarded = False


def secret(name: str, value: str | None = None) -> bool:
    """Does this variable look like it holds a secret: by its name, or (when given) by
    its value, a URL with a password in it?"""
    upper = name.upper()
    if (
        upper.endswith(SECRET_ENDINGS)
        or any(part in upper for part in SECRET_PARTS)
        or upper in SECRET_NAMES
    ):
        return True
    return value is not None and url_password(value)


def url_password(value: str) -> bool:
    """Is value a URL whose authority carries a password (`scheme://user:pw@host`)?"""
    scheme, sep, rest = value.strip().partition("://")
    if not sep or not scheme or not scheme[0].isalpha() or len(scheme) > 32:
        return False
    if not all(c.isalnum() or c in "+.-" for c in scheme):
        return False
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    userinfo, at, _ = authority.rpartition("@")
    return bool(at) and ":" in userinfo and bool(userinfo.split(":", 1)[1])


def take(environ: os._Environ[str] | None = None) -> list[str]:
    """Move the secrets out of the environment (once per process); return their names.
    A proxy URL with a password (`HTTPS_PROXY=http://u:pw@proxy`) stays: the providers'
    HTTP client reads it from the environment; `tool_env()` still leaves it out."""
    global _taken
    environ = os.environ if environ is None else environ
    names = [
        name
        for name, value in environ.items()
        if secret(name, value) and (secret(name) or not name.upper().endswith("_PROXY"))
    ]
    for name in names:
        _store[name] = environ.pop(name)  # os.environ.pop also unsetenv()s it
    if names and environ is os.environ and not _taken:
        wipe({os.fsencode(name) for name in names})
    _taken = True
    return names


def wipe(names: set[bytes]) -> int:
    """Zero the `NAME=VALUE` entries of names in this process's original environment
    block (what `/proc/self/environ` shows); return how many were wiped. Linux only;
    elsewhere there is no such file and nothing to do."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # fields 50 and 51
    except (OSError, IndexError, ValueError):
        return 0
    if not 0 < start < end:
        return 0
    try:
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            block = mem.read(end - start)
            wiped, offset = 0, 0
            for entry in block.split(b"\0"):
                if entry.split(b"=", 1)[0] in names and b"=" in entry:
                    mem.seek(start + offset)
                    mem.write(b"\0" * len(entry))
                    wiped += 1
                offset += len(entry) + 1
            return wiped
    except OSError:
        return _wipe_ctypes(start, end, names)


def _wipe_ctypes(start: int, end: int, names: set[bytes]) -> int:
    """The same through ctypes, where /proc/self/mem cannot be written."""
    import ctypes

    block = ctypes.string_at(start, end - start)
    wiped, offset = 0, 0
    for entry in block.split(b"\0"):
        if entry.split(b"=", 1)[0] in names and b"=" in entry:
            ctypes.memset(start + offset, 0, len(entry))
            wiped += 1
        offset += len(entry) + 1
    return wiped


def get(name: str, default: str = "") -> str:
    """A provider's setting: from the environment if it is (again) there, else the
    store, else the sign-in (`elelem login`: signin.py, which the environment beats)."""
    from . import signin

    return os.environ.get(name) or _store.get(name) or signin.value(name, environ()) or default


def values() -> list[str]:
    """Every secret value known to this process, for masking."""
    from . import signin

    return [value for value in _store.values() if value] + signin.secrets()


def environ() -> Mapping[str, str]:
    """The environment with the secrets put back (for reading only)."""
    return {**_store, **os.environ}


def kept(name: str, keep: list[str]) -> bool:
    import fnmatch

    return any(fnmatch.fnmatchcase(name, pattern) for pattern in keep)


def tool_env() -> dict[str, str]:
    """The environment of a tool process: no secret unless the user kept it."""
    everything = environ()
    if os.environ.get(KEEP_ALL) == "1":
        return dict(everything)
    keep = [word.strip() for word in os.environ.get(KEEP, "").split(",") if word.strip()]
    return {k: v for k, v in everything.items() if not secret(k, v) or kept(k, keep)}


def guard() -> None:
    """Make this process not dumpable (once; Linux only), unless ELELEM_DUMPABLE=1."""
    global _guarded
    if _guarded or os.environ.get("ELELEM_DUMPABLE") == "1" or not sys.platform.startswith("linux"):
        _guarded = True
        return
    _guarded = True
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass
