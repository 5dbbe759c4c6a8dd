"""The words of a failed HTTP exchange, for HTTPProvider's error texts (http.py): the
API's own message and codes from any of the three error shapes, the seconds a server
asked us to wait, and the operating system's (or TLS's) reason under httpx's wrapping."""

from __future__ import annotations

import email.utils
import os
import re
import ssl
import time
from typing import Any

import httpx

from ..base.jsonsafe import loads

SSL_NOISE = re.compile(r"^\[SSL: [A-Z_]+\] | \(_ssl\.c:\d+\)$")


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, `retry-after` (seconds or date)."""
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def error_detail(body: bytes) -> tuple[str, set[str]]:
    """The API's own message (one line, clipped) and its error codes, from any of the
    three error shapes."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        payload = loads(text)
    except ValueError:
        return one_line(text), set()
    if not isinstance(payload, dict):
        return one_line(text), set()
    error = payload.get("error", payload)
    if isinstance(error, str):
        return one_line(error), set()
    if not isinstance(error, dict):
        return one_line(text), set()
    details: dict[str, Any] = error["details"] if isinstance(error.get("details"), dict) else {}
    codes = {str(c) for c in (error.get("code"), error.get("type"), details.get("error_code")) if c}
    return one_line(str(error.get("message") or text)), codes


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def root_cause(exc: BaseException | None) -> str:
    """The operating system's words (`Connection refused`) under httpx's wrapping; for
    TLS, the reason (`certificate verify failed: self-signed certificate`)."""
    found, seen = str(exc), 0
    while exc is not None and seen < 10:
        if isinstance(exc, ssl.SSLError):  # its errno is 1, its words are the reason
            found = SSL_NOISE.sub("", exc.strerror or str(exc)) or str(exc)
        elif isinstance(exc, OSError) and isinstance(exc.errno, int) and exc.errno > 0:
            found = os.strerror(exc.errno)
        elif isinstance(exc, OSError) and exc.strerror:
            found = exc.strerror
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return found
