"""turns/usage.py: the one home of tokens, context and cost, as every face shows them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from elelem_daemon.agent import TurnResult
from elelem_daemon.turns.usage import PRICES, Meter, Price, cost, price_of, status, summary


class Billed:
    billed = True
    cache_ttl = "5m"


class Local:
    billed = False


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "elelem").mkdir()
    return tmp_path / "elelem" / "config.toml"


def test_the_longest_prefix_prices_a_billed_model_and_a_local_one_is_unknown() -> None:
    assert price_of(Billed(), "gpt-4o-mini-2024-07-18") == PRICES["gpt-4o-mini"]
    assert price_of(Billed(), "claude-opus-4-5-20251101") == PRICES["claude-opus-4-5"]
    assert price_of(Billed(), "claude-opus-4-1") == PRICES["claude-opus-4"]
    assert price_of(Local(), "gpt-4o") is None  # a local server calling its model gpt-4o
    assert price_of(Billed(), "no-such-model") is None


def test_the_users_table_wins_and_applies_to_any_provider(config: Path) -> None:
    config.write_text(
        '[prices."gpt-4o"]\ninput = 1\noutput = 2\n[prices.smol]\ninput = 0\noutput = 0\n'
    )
    assert price_of(Billed(), "gpt-4o") == Price(1.0, 2.0)
    assert price_of(Local(), "smollm2") == Price(0.0, 0.0)


@pytest.mark.parametrize(
    "text",
    [
        "[prices",  # not TOML
        "prices = 3",
        '[prices.x]\ninput = "free"\noutput = 1',
        "[prices.x]\ninput = -1\noutput = 1",
        "[prices.x]\ninput = 1e300\noutput = 1",
        "[prices.x]\noutput = 1",
        "[prices.x]\ninput = true\noutput = 1",
    ],
)
def test_a_broken_price_table_is_a_log_line_never_a_failure(
    config: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    config.write_text(text)
    with caplog.at_level(logging.WARNING):
        assert price_of(Local(), "x") is None
    assert price_of(Billed(), "gpt-4o") == PRICES["gpt-4o"]


def test_cost_counts_the_cache_at_its_own_price() -> None:
    counts = {
        "input_tokens": 1_000_000,
        "cache_read_tokens": 600_000,
        "cache_write_tokens": 300_000,
        "output_tokens": 100_000,
    }
    sonnet = Price(3.0, 15.0, 0.30)  # 0.1 M plain, 0.6 M read, 0.3 M written, 0.1 M out
    assert cost(counts, sonnet) == pytest.approx(0.3 + 0.18 + 1.125 + 1.5)
    assert cost(counts, sonnet, "1h") == pytest.approx(0.3 + 0.18 + 1.8 + 1.5)  # 2x writes
    assert cost(counts, None) is None
    assert cost({"input_tokens": 5, "cache_read_tokens": 99}, sonnet) == pytest.approx(
        99 * 0.30 / 1e6
    )  # a hostile count never makes a negative cost


def test_the_meter_sums_the_turns_and_reports_them() -> None:
    meter = Meter()
    assert status(meter) == [] and meter.report()["session"]["cost"] is None
    usage = {"input_tokens": 1000, "output_tokens": 10, "cache_read_tokens": 900}
    meter.add(TurnResult("a", usage=usage, context_tokens=1010), Billed(), "gpt-4o")
    meter.add(TurnResult("b", usage=usage, context_tokens=2020), Billed(), "gpt-4o")
    meter.add(TurnResult("c", usage={"bogus": 5}), Billed(), "gpt-4o")  # the stub's
    report = meter.report()
    one = (100 * 2.5 + 900 * 1.25 + 10 * 10.0) / 1e6
    assert report["session"] == {
        "turns": 3,
        "inputTokens": 2000,
        "outputTokens": 20,
        "cacheReadTokens": 1800,
        "cacheWriteTokens": 0,
        "cost": pytest.approx(2 * one),
    }
    assert report["used"] is None and report["size"] is None  # the last turn said nothing
    assert "turns: 3" in summary(meter, "gpt-4o")
    assert "cost: $0.0029 (estimated)" in summary(meter, "gpt-4o")  # $0.00295


def test_an_unpriced_session_says_how_to_price_it() -> None:
    meter = Meter()
    meter.add(TurnResult("a", usage={"input_tokens": 5, "output_tokens": 1}), Local(), "smol")
    assert "cost: unknown (no price for smol: add one under [prices] in config.toml)" in (
        summary(meter, "smol")
    )
    assert status(meter) == ["5 in, 1 out"]  # no window known, no context share
