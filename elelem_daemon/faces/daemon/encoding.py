"""Encoding: the daemon's frames as compact ASCII JSON, from one C encoder built once.

`plain_encoder` is json's C encoder made once (`json.dumps` builds one per call);
`compact_encoder` is the same, never writing NaN or Infinity (as JSON.stringify does).
protocol.py writes every frame with them; spliced.py writes a large answer piece by
piece to the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...base.jsonsafe import cleaned


def plain_encoder(default: Callable[[Any], Any]) -> Callable[[Any], str]:
    """Compact ASCII JSON from one C encoder built once (`json.dumps` builds one per call);
    raises ValueError on NaN or Infinity, RecursionError past the interpreter's depth.

    No circular-reference bookkeeping: the daemon's messages are trees, and a reused
    marker table could keep stale entries after a failed encode. Safe to call from
    several threads at once (it keeps no state)."""
    from json.encoder import (  # type: ignore[attr-defined]
        c_make_encoder,  # undocumented, absent from typeshed
        encode_basestring_ascii,
    )

    if c_make_encoder is None:  # an interpreter without the C accelerator
        return json.JSONEncoder(separators=(",", ":"), default=default, allow_nan=False).encode
    encoder = c_make_encoder(
        None, default, encode_basestring_ascii, None, ":", ",", False, False, False
    )

    def joined(obj: Any) -> str:
        return "".join(encoder(obj, 0))

    return joined


def compact_encoder(default: Callable[[Any], Any]) -> Callable[[Any], str]:
    """`plain_encoder`, never NaN or Infinity: such a value is written as `null`
    (jsonsafe.cleaned), as JSON.stringify does; a part nested too deep, as a string."""
    plain = plain_encoder(default)

    def encode(obj: Any) -> str:
        try:
            return plain(obj)
        except (ValueError, RecursionError):  # NaN, Infinity, too deep: written as JSON
            return plain(cleaned(obj))

    return encode
