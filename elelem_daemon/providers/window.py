"""Context windows: how many tokens a model's context holds, for the editors' meters.

A provider's `context_window()` answers, the first that knows:

1. `ELELEM_CONTEXT_WINDOW` (a whole number of tokens), when set;
2. the API's own metadata, one `window_lookup` per provider: Anthropic's
   `GET /v1/models/{model}` (`max_input_tokens`); for the OpenAI-compatible servers,
   llama.cpp's `GET /props` (`n_ctx`, the context the server was started with), else
   the `GET /models` entry of the model (`max_model_len` from vLLM, `context_length`
   from LM Studio and OpenRouter); Ollama's `POST /api/show` (the model's `num_ctx`
   parameter, else its `*.context_length`) unless `OLLAMA_NUM_CTX` says;
3. `KNOWN`, a small table of model names;

else None (a face then shows no window). The API's figure is bounded
(base/figures.py): one below MIN_WINDOW or past MAX_TOKENS is ignored, logged, and
kept as `window_note`, a line `/model` shows. The answer is looked up once per provider (a
model change builds a new provider) within `LOOKUP_TIMEOUT`, and a failed lookup is
logged and counts as unknown: it never fails a turn. Faces ask for it beside a turn,
never on its path (the ACP face starts the lookup when a session opens).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from collections.abc import Mapping
from typing import Any

from ..base import figures
from ..base.errors import ProviderError

log = logging.getLogger(__name__)

LOOKUP_TIMEOUT = 5.0  # seconds for a provider's metadata request
KNOWN: tuple[tuple[str, int], ...] = (  # model name prefix -> tokens; the first match wins
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gpt-oss", 131_072),
)


def setting(env: Mapping[str, str] | None = None) -> int | None:
    """`ELELEM_CONTEXT_WINDOW`, or None when unset; a clear error when it is not a number."""
    raw = (os.environ if env is None else env).get("ELELEM_CONTEXT_WINDOW", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ProviderError(f"ELELEM_CONTEXT_WINDOW must be a whole number of tokens, got {raw!r}")
    return int(raw)


def known(model: str | None) -> int | None:
    """The table's window for a model name (a provider prefix such as `openai/` ignored)."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    return next((tokens for prefix, tokens in KNOWN if name.startswith(prefix)), None)


def tokens(value: Any) -> int | None:
    """A positive whole number of tokens from a metadata field, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value) if value >= 1 and value == int(value) else None


class Windowed:
    """What a provider mixes in: `context_window()`, cached, over its `window_lookup()`."""

    model: str | None = None
    window_note: str | None = None  # why the API's figure was ignored (base/figures.py)
    _window: asyncio.Future[int | None] | None = None

    async def window_lookup(self) -> int | None:
        """The API's own answer (overridden per provider); None when it has none."""
        return None

    async def context_window(self) -> int | None:
        """The model's context window in tokens, or None when nothing says."""
        if self._window is None:
            self._window = asyncio.ensure_future(self._find())
        return await asyncio.shield(self._window)

    async def _find(self) -> int | None:
        try:
            configured = setting()
        except ProviderError as exc:
            log.warning("%s", exc)
            configured = None
        if configured is not None:
            return configured
        try:
            async with asyncio.timeout(LOOKUP_TIMEOUT):  # not wait_for: it can lose a cancel
                found = await self.window_lookup()
        except Exception as exc:  # metadata is a nicety: never an error for the session
            log.info("context window of %s: lookup failed: %s", self.model, _clean(self, exc))
            found = None
        if (note := figures.window_note(f"{self.model or 'the server'}", found)) is not None:
            log.warning("%s", note)
            self.window_note, found = note, None
        return found if found is not None else known(self.model)


def _clean(provider: Any, exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    redact = getattr(provider, "redact", None)
    return redact(text) if callable(redact) else text
