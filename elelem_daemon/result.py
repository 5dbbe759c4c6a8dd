"""Result: what a tool call gives back to the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base.jsonsafe import dumps


@dataclass(frozen=True)
class Result:
    """`ok` is what the model reads (elelem's rule: no `error`, ok). `failed` is what
    every face shows and stores: not ok, or an `exit_status` outside the tool's `fine`
    statuses (`list` of a missing path exits 2 with no error: a failure to show, while
    `grep` finding nothing, exit 1, is not)."""

    payload: dict[str, Any] = field(default_factory=dict)
    ok: bool = True
    fine: tuple[int, ...] = field(default=(0,), compare=False)

    @classmethod
    def wrap(cls, value: Any, fine: tuple[int, ...] = (0,)) -> Result:
        """A dict with an `error` key is a failure; anything else a success."""
        if isinstance(value, Result):
            return value
        if not isinstance(value, dict):
            value = {"content": value} if value is not None else {}
        return cls(value, "error" not in value, tuple(fine))

    @property
    def failed(self) -> bool:
        status = self.payload.get("exit_status")
        off = isinstance(status, int) and not isinstance(status, bool) and status not in self.fine
        return not self.ok or off

    @property
    def why_failed(self) -> str:
        """What a face says of a failed result: its error, else `exit N`; "" if none."""
        if not self.failed:
            return ""
        if "error" in self.payload:
            return str(self.payload["error"])
        status = self.payload.get("exit_status")
        return f"exit {status}" if isinstance(status, int) else "failed"

    @classmethod
    def failure(cls, message: str, **extra: Any) -> Result:
        return cls({"error": message, **extra}, ok=False)

    def to_dict(self) -> dict[str, Any]:
        """Payload keys in the handler's order, then `ok` (an existing `ok` keeps its place)."""
        return {**self.payload, "ok": self.ok}

    def to_json(self) -> str:
        return dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False, default=str)

    @property
    def error(self) -> str | None:
        return self.payload.get("error") if not self.ok else None
