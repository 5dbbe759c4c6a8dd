"""Usage: what a session's turns used, in tokens, context and money. The one home of the
accounting: every face shows what `Meter.report` says, none counts for itself.

A turn's counts are what its provider reported (providers/*: `input_tokens`, the whole
prompt; `output_tokens`; `cache_read_tokens` and `cache_write_tokens`, the prompt's
parts read from or written to the provider's cache, when the provider says), summed
over its requests. The context used is the last request's input and output; its size
is the provider's `context_window()` (providers/window.py), looked up in the background
when a face opens the session and again when the provider changed (`Live`; a face
never waits for it: until it is known, `size` is None).

The cost is estimated for the model that answers (the session's `answering`: the name
the server's answers carry, else the one asked for) from `PRICES` (US dollars per
million tokens, model-name prefixes, the longest that matches wins) for a provider that
bills by them (`provider.billed`: Anthropic, api.openai.com), or from the user's own
table in config.toml, which wins and applies to any provider:

    [prices."my-model"]            # a model name prefix
    input = 1.0                    # per million input tokens, not read from the cache
    output = 4.0
    cache_read = 0.1               # optional: input's price
    cache_write = 1.25             # optional: input's price x 1.25 (x 2 with a 1 h cache)

A cache write costs 1.25 times the input price (2 times with ANTHROPIC_CACHE_TTL=1h, the
provider's `cache_ttl`); a read the table's `cache_read`. Unknown price: cost None.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import Any, Protocol

from ..base.config import config_table
from ..base.errors import ElelemError

log = logging.getLogger(__name__)
COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
WRITE = {"5m": 1.25, "1h": 2.0}  # a cache write's price, times the input price
MAX_PRICES = 200  # entries read from config.toml's [prices]


class Turned(Protocol):
    """What `Meter.add` reads of a turn's result (agent.TurnResult)."""

    @property
    def usage(self) -> dict[str, int]: ...

    @property
    def context_tokens(self) -> int | None: ...


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


PRICES: dict[str, Price] = {  # checked 2026-12-05 against the vendors' price pages
    "claude-opus-4-5": Price(5.0, 25.0, 0.50),
    "claude-opus-4": Price(15.0, 75.0, 1.50),
    "claude-sonnet-4": Price(3.0, 15.0, 0.30),
    "claude-3-7-sonnet": Price(3.0, 15.0, 0.30),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10),
    "claude-3-5-haiku": Price(0.80, 4.0, 0.08),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4o": Price(2.50, 10.0, 1.25),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1": Price(2.0, 8.0, 0.50),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    "gpt-5": Price(1.25, 10.0, 0.125),
    "o3": Price(2.0, 8.0, 0.50),
    "o4-mini": Price(1.10, 4.40, 0.275),
}


def configured_prices() -> dict[str, Price]:
    """config.toml's `[prices]`; a missing file is none, a broken one a log line."""
    try:
        table = config_table(os.environ).get("prices", {})
    except ElelemError as exc:
        log.warning("prices: %s", exc)
        return {}
    prices: dict[str, Price] = {}
    for name, entry in list(table.items())[:MAX_PRICES] if isinstance(table, dict) else []:
        try:
            values = {k: _dollars(entry.get(k)) for k in ("cache_read", "cache_write")}
            prices[str(name)] = Price(_need(entry, "input"), _need(entry, "output"), **values)
        except (AttributeError, TypeError, ValueError) as exc:
            log.warning("prices: config.toml: [prices.%r] is left out: %s", name, exc)
    return prices


def _dollars(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e6:
        raise ValueError(f"a price must be a number of dollars >= 0, got {value!r}")
    return float(value)


def _need(entry: Any, key: str) -> float:
    value = _dollars(entry.get(key))
    if value is None:
        raise ValueError(f"{key} is missing")
    return value


def _match(table: dict[str, Price], model: str) -> Price | None:
    name = model.lower().rsplit("/", 1)[-1]
    best = max((p for p in table if name.startswith(p.lower())), key=len, default=None)
    return table[best] if best is not None else None


def price_of(provider: Any, model: str | None) -> Price | None:
    """The model's price: the user's table first, then `PRICES` for a billing provider."""
    if not model:
        return None
    mine = _match(configured_prices(), model)
    if mine is not None or not getattr(provider, "billed", False):
        return mine
    return _match(PRICES, model)


def cost(counts: dict[str, int], price: Price | None, ttl: str = "5m") -> float | None:
    """What these counts cost at `price`, in US dollars; None with no price."""
    if price is None:
        return None
    read, wrote = counts.get("cache_read_tokens", 0), counts.get("cache_write_tokens", 0)
    plain = max(counts.get("input_tokens", 0) - read - wrote, 0)
    read_price = price.input if price.cache_read is None else price.cache_read
    write_price = price.cache_write
    if write_price is None:
        write_price = price.input * WRITE.get(ttl, WRITE["5m"])
    dollars = (
        plain * price.input
        + read * read_price
        + wrote * write_price
        + counts.get("output_tokens", 0) * price.output
    )
    return dollars / 1_000_000


class Meter:
    """A session's usage: each turn's counts and cost (`add`, called by `Session.turn`),
    their sums, and the context window of the provider in use."""

    def __init__(self) -> None:
        self.total = dict.fromkeys(COUNTS, 0)
        self.cost = 0.0
        self.priced = False  # some turn had a price (else the session's cost is unknown)
        self.unpriced = 0  # turns that used tokens with no price known
        self.turns = 0
        self.last: dict[str, Any] | None = None  # the last turn's counts, used and cost
        self._provider: Any = None
        self._window: asyncio.Future[int | None] | None = None

    def look_up(self, provider: Any) -> None:
        """Start looking up the provider's context window, once per provider."""
        if provider is self._provider:
            return
        self._provider, self._window = provider, None
        lookup = getattr(provider, "context_window", None)
        if not callable(lookup):
            return
        try:
            self._window = asyncio.ensure_future(lookup())
        except RuntimeError:  # no running loop (a plain script): no window
            return
        self._window.add_done_callback(_quiet)

    @property
    def size(self) -> int | None:
        """The context window in tokens, once the lookup is done; else None."""
        window = self._window
        if window is None or not window.done() or window.cancelled():
            return None
        if window.exception() is not None:
            return None
        return window.result()

    async def window(self) -> int | None:
        """The context window, waiting for the lookup (bounded by providers/window.py)."""
        if self._window is None:
            return None
        try:
            return await asyncio.shield(self._window)
        except Exception:
            return None

    def add(self, result: Turned | None, provider: Any, model: str | None) -> None:
        """Count a finished turn (cancelled and failed ones too: their tokens were used)."""
        if result is None:
            return
        counts = {k: v for k, v in result.usage.items() if k in COUNTS and isinstance(v, int)}
        spent = cost(counts, price_of(provider, model), getattr(provider, "cache_ttl", "5m"))
        for key, value in counts.items():
            self.total[key] += value
        self.turns += 1
        if spent is not None:
            self.cost += spent
            self.priced = True
        elif counts:
            self.unpriced += 1
        self.last = {**counts, "used": result.context_tokens, "cost": spent}

    @property
    def reported(self) -> bool:
        """Whether the last turn's provider reported any token count."""
        return self.last is not None and any(self.last.get(key) for key in COUNTS)

    def report(self) -> dict[str, Any]:
        """What every face shows (protocol.md, `event/usage`): the last turn's counts,
        the context used and its size, the cost, and the session's sums."""
        last = self.last or {}
        return {
            "inputTokens": last.get("input_tokens", 0),
            "outputTokens": last.get("output_tokens", 0),
            "cacheReadTokens": last.get("cache_read_tokens", 0),
            "cacheWriteTokens": last.get("cache_write_tokens", 0),
            "used": last.get("used"),
            "size": self.size,
            "cost": _rounded(last.get("cost")),
            "session": {
                "turns": self.turns,
                "inputTokens": self.total["input_tokens"],
                "outputTokens": self.total["output_tokens"],
                "cacheReadTokens": self.total["cache_read_tokens"],
                "cacheWriteTokens": self.total["cache_write_tokens"],
                "cost": _rounded(self.cost) if self.priced else None,
            },
        }


def _rounded(dollars: float | None) -> float | None:
    return None if dollars is None else round(dollars, 6)


def _quiet(done: asyncio.Future[Any]) -> None:
    if not done.cancelled():
        done.exception()  # seen: never "exception was never retrieved"


def short(tokens: int | None) -> str:
    """12345 -> `12.3k`, 1200000 -> `1.2M`."""
    if tokens is None:
        return "?"
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    if tokens >= 1_000:
        return f"{tokens / 1_000:.1f}k"
    return str(tokens)


def dollars(amount: float | None) -> str:
    if amount is None:
        return "cost unknown"
    return f"${amount:.4f}" if amount < 1 else f"${amount:.2f}"


def status(meter: Meter) -> list[str]:
    """The status line's parts: `12.3k/200k ctx (6%)`, `530 in (480 cached), 9 out`, `$0.0123`."""
    last, parts = meter.last, list[str]()
    if last is None or not meter.reported:
        return parts  # the provider said nothing (the stub)
    used, size = last.get("used"), meter.size
    if used is not None:
        share = f" ({used * 100 // size}%)" if size else ""
        parts.append(f"{short(used)}/{short(size) if size else '?'} ctx{share}")
    tokens = f"{last.get('input_tokens', 0)} in"
    if last.get("cache_read_tokens"):
        tokens += f" ({last['cache_read_tokens']} cached)"
    parts.append(f"{tokens}, {last.get('output_tokens', 0)} out")
    if meter.priced:
        parts.append(dollars(meter.cost))
    return parts


def summary(meter: Meter, model: str | None) -> str:
    """`/cost`: the session's sums, the context, the cost."""
    total = meter.total
    cached = f"{total['cache_read_tokens']:,} read from the cache"
    if total["cache_write_tokens"]:
        cached += f", {total['cache_write_tokens']:,} written to it"
    lines = [
        f"  turns: {meter.turns}",
        f"  input: {total['input_tokens']:,} tokens ({cached})",
        f"  output: {total['output_tokens']:,} tokens",
    ]
    used = (meter.last or {}).get("used")
    size = meter.size
    if used is not None:
        window = f" of {size:,} ({used * 100 // size}%)" if size else " (window unknown)"
        lines.append(f"  context: {used:,} tokens{window}")
    if meter.priced:
        more = f" ({meter.unpriced} turn(s) without a price)" if meter.unpriced else ""
        lines.append(f"  cost: {dollars(meter.cost)} (estimated){more}")
    elif meter.turns:
        lines.append(
            f"  cost: unknown (no price for {model or 'this model'}: "
            "add one under [prices] in config.toml)"
        )
    return "\n".join(lines)
