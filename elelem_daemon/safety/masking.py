"""Masking: the secrets an MCP server's own config holds, kept out of what is shown.

The one rule for what `/mcp`, the `event/mcp` frames (and ACP's session/new), the
server's log file and the trust question (trust_list.py) show of a config (docs/mcp.md,
Secrets in the config):
- `env`: every value is a secret; none is shown (status names no env at all);
- `args`: an argument is masked (`***`) when
  - it follows a flag whose name says secret (`--token X`, `--api-key X`, `-k X`,
    `-p X` (a password for mysql and others; a port masked is harmless);
    `flag_secret` below), or is `--flag=VALUE` / `NAME=VALUE` with such a name: the
    value is masked, the name kept (`--token=***`). A name says secret when the keys
    rule says so (keys.secret: `*_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`, ...), when
    it contains TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, BEARER or APIKEY, or when
    one of its `-`/`_`-separated parts is KEY, PWD, PASS, PAT, AUTH, SIG or SIGNATURE
    (`--db-path` is none; `--key-file` is one: a masked path is harmless);
  - it looks like a token: a known prefix (`ghp_`, `github_pat_`, `sk-`, `xoxb-`,
    `glpat-`, `AKIA`, `AIza`, `hf_`, `eyJ` for a JWT, ...), or 24 characters or more
    of `[A-Za-z0-9_-+=.~]` mixing upper case, lower case and digits (a version or a
    package name does not);
  - it is a URL: its password (`postgres://u:***@h/db`), a token as its user
    (`https://***@github.com/...`: keys.url_token, or token-like), a token-like part of
    its path (`https://host/***/sse`) and the values of query parameters with a secret
    name (`?token=***`) are masked;
  - it holds a value the daemon's keys store has, or one of the config's env values;
  - it is a shell string (`sh -c "server --password X"`, `-H "Authorization: Bearer
    X"`): its words are masked by the same rules, and the word after `Bearer`, `Basic`
    or `token`, and all after a header name that says secret (`Authorization:`,
    `X-Api-Key:`), are masked too;
- a URL target (`http`/`sse`) is masked as a URL argument is; headers are never shown.
In the log, the launch line is masked this way and what the server itself writes to
stderr has those same values (masked arguments, env values) replaced by `***`, chunk
by chunk (a value split across two reads of stderr may escape it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import SplitResult, parse_qsl, quote, urlsplit, urlunsplit

from ..base import keys

MASK = "***"
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "BEARER", "APIKEY")
SECRET_PARTS = frozenset({"KEY", "PWD", "PASS", "PAT", "AUTH", "SIG", "SIGNATURE"})
SECRET_SHORT_FLAGS = ("-k", "-p")
SCHEMES = frozenset({"BEARER", "BASIC", "TOKEN", "DIGEST"})  # Authorization: Bearer X
HEADERS = frozenset({"AUTHORIZATION", "PROXY_AUTHORIZATION", "COOKIE"})  # masked whole
TOKEN_PREFIXES = (
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "sk-",
    "sk_live_",
    "rk_live_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxr-",
    "xapp-",
    "AKIA",
    "ASIA",
    "AIza",
    "hf_",
    "npm_",
    "pypi-",
    "eyJ",
    "dop_v1_",
    "shpat_",
)
TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+=.~")
MIN_SECRET = 8  # shorter values are not searched for in text (too many false hits)


def name_secret(name: str) -> bool:
    """Does a flag or variable name (`--api-key`, `GITHUB_TOKEN`) say it holds a secret?"""
    bare = name.lstrip("-").replace("-", "_").replace(".", "_").upper()
    if not bare:
        return False
    if keys.secret(bare) or any(word in bare for word in SECRET_WORDS):
        return True
    return any(part in SECRET_PARTS for part in bare.split("_"))


def flag_secret(arg: str) -> bool:
    """Is arg a flag whose next argument is a secret (`--token`, `-k`)?"""
    return (
        arg.startswith("-") and "=" not in arg and (arg in SECRET_SHORT_FLAGS or name_secret(arg))
    )


def token_like(word: str) -> bool:
    """Does word look like a token by its shape alone?"""
    if len(word) >= 12 and word.startswith(TOKEN_PREFIXES):
        return True
    if len(word) < 24 or not set(word) <= TOKEN_CHARS:
        return False
    return (
        any(c.isupper() for c in word)
        and any(c.islower() for c in word)
        and any(c.isdigit() for c in word)
    )


def url(value: str) -> str:
    """A URL with its password and its secret query parameters masked (as it was, if no
    URL)."""
    if "://" not in value:
        return value
    try:
        parts = urlsplit(value)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        if colon and password:
            netloc = f"{user}:{MASK}@{host}"
        elif token_like(user) or keys.url_token(f"{parts.scheme}://{netloc}"):
            netloc = f"{MASK}@{host}"
    path = "/".join(MASK if path_token(p) else p for p in parts.path.split("/"))
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(name_secret(k) or token_like(v) for k, v in pairs):
            query = "&".join(
                f"{quote(k)}={MASK if name_secret(k) or token_like(v) else quote(v)}"
                for k, v in pairs
            )
    return urlunsplit(SplitResult(parts.scheme, netloc, path, query, parts.fragment))


def path_token(segment: str) -> bool:
    """Does a URL path segment look like a token (`/bot123:AAH.../`, a webhook's key)?
    Token-like, or 20 characters or more of letters, digits, `_`, `-` and `:` holding
    both letters and digits (a hex key: a version or a word does not)."""
    if token_like(segment):
        return True
    if len(segment) < 20 or not all(c.isalnum() or c in "_-:" for c in segment):
        return False
    return any(c.isalpha() for c in segment) and any(c.isdigit() for c in segment)


def args(values: Iterable[str], known: Iterable[str] = ()) -> list[str]:
    """Each argument as shown (see the module docstring); `known`: secret values to mask
    wherever they appear (the config's env values)."""
    secrets = _secrets(known)
    shown: list[str] = []
    after_flag = False
    for arg in values:
        if after_flag:
            shown.append(MASK)
            after_flag = False
            continue
        after_flag = flag_secret(arg)
        spaced = any(c.isspace() for c in arg.strip())  # a shell string: word by word
        if spaced and not any(secret in arg for secret in secrets):
            shown.append(shell(arg, secrets))
            continue
        name, eq, value = arg.partition("=")
        if eq and value and "://" not in name and name_secret(name):
            shown.append(f"{name}={MASK}")
        elif token_like(arg) or any(secret in arg for secret in secrets):
            shown.append(MASK)
        elif eq and "://" not in name and "://" in value:
            shown.append(f"{name}={url(value)}")  # --db=postgres://u:***@h/db
        else:
            shown.append(url(arg) if "://" in arg else arg)
    return shown


def shell(text: str, secrets: Iterable[str] = ()) -> str:
    """A shell string or a header with its words masked (see the module docstring)."""
    parts = re.split(r"(\s+)", text)
    words = [bare(part) for part in parts[::2]]
    shown = (
        args(words, secrets)
        if len(words) > 1
        else [MASK if any(s in text for s in secrets) else text]
    )
    rest = False  # after a header that says secret: every word but the scheme
    for n, word in enumerate(words):
        if (n and _scheme(words[n - 1])) or (rest and word and not _scheme(word)):
            shown[n] = MASK
        rest = (rest or _header(word)) and not parts[2 * n].endswith(("'", '"'))
    out = list(parts)
    for n, (word, masked) in enumerate(zip(words, shown, strict=True)):
        if masked != word:  # the quotes around it kept: `'Bearer ***'`
            part = parts[2 * n]
            lead = part[: len(part) - len(part.lstrip("'\""))]
            trail = part[len(part.rstrip("'\"")) :]
            out[2 * n] = lead + masked + trail if masked == MASK else masked
    return "".join(out)


def bare(word: str) -> str:
    """A shell word without its surrounding quotes (`'x'`, `"x"`)."""
    return word[1:-1] if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"" else word


def _scheme(word: str) -> bool:
    """An Authorization scheme (`Bearer`), whose next word is the credential."""
    return word.rstrip(":").upper() in SCHEMES


def _header(word: str) -> bool:
    """A header name that says secret, ending in `:` (`Authorization:`, `X-Api-Key:`)."""
    if not word.endswith(":") or len(word) < 2:
        return False
    name = word[:-1].lstrip("-\"'").replace("-", "_").upper()
    return name in HEADERS or name_secret(name)


def hidden(values: Iterable[str], known: Iterable[str] = ()) -> list[str]:
    """The values `args` masks (whole arguments, flag values, URL passwords), and the
    known ones: what to take out of the server's own stderr."""
    found = set(_secrets(known))
    values = list(values)
    for arg, shown in zip(values, args(values), strict=True):
        if shown == arg:
            continue
        if any(c.isspace() for c in arg.strip()) and shown != MASK:  # a shell string
            words = re.split(r"\s+", arg.strip())
            masked = re.split(r"\s+", shown.strip())
            if len(words) == len(masked):
                found.update(
                    w.strip("'\"")
                    for w, m in zip(words, masked, strict=True)
                    if m.strip("'\"") == MASK
                )
            found.update(hidden([w.strip("'\"") for w in words]))
            continue
        if shown == MASK:
            found.add(arg)
        elif shown.endswith(f"={MASK}") and "=" in arg:
            found.add(arg.partition("=")[2])
        else:
            name, eq, value = arg.partition("=")
            try:
                parts = urlsplit(value if eq and "://" not in name else arg)
            except ValueError:
                continue
            if parts.password:
                found.add(parts.password)
            user = parts.username
            if user and (token_like(user) or keys.url_token(f"{parts.scheme}://{user}@h")):
                found.add(user)
            found.update(p for p in parts.path.split("/") if path_token(p))
            found.update(v for k, v in parse_qsl(parts.query) if name_secret(k) or token_like(v))
    return sorted((v for v in found if len(v) >= MIN_SECRET), key=len, reverse=True)


def redact(data: bytes, secrets: list[bytes]) -> bytes:
    """data with every secret replaced by MASK."""
    for secret in secrets:
        if secret in data:
            data = data.replace(secret, MASK.encode())
    return data


def _secrets(known: Iterable[str]) -> list[str]:
    values = {v for v in [*known, *keys.values()] if len(v) >= MIN_SECRET}
    return sorted(values, key=len, reverse=True)
