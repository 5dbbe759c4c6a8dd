"""Result: what a tool call gives back to the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base.jsonsafe import dumps


@dataclass(frozen=True)
class Result:
    payload: dict[str, Any] = field(default_factory=dict)
    ok: bool = True

    @classmethod
    def wrap(cls, value: Any) -> Result:
        """A dict with an `error` key is a failure; anything else a success."""
        if isinstance(value, Result):
            return value
        if not isinstance(value, dict):
            value = {"content": value} if value is not None else {}
        return cls(value, "error" not in value)

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
