"""base/figures.py: numbers from outside are bounded before any arithmetic (issue 36)."""

from __future__ import annotations

import logging

import pytest

from elelem_daemon.base import figures
from elelem_daemon.providers.window import tokens


def test_a_count_past_the_bound_is_unknown_and_logged_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(figures, "_logged", set())
    with caplog.at_level(logging.WARNING):
        assert figures.count("input_tokens", 10**400) is None
        assert figures.count("input_tokens", 10**9) is None
        assert figures.count("input_tokens", -1) is None
    (line,) = [r.getMessage() for r in caplog.records]
    assert line == (
        "input_tokens: 100000000000... (401 characters) is outside 0..100000000: treated as unknown"
    )
    assert figures.count("output_tokens", 12) == 12
    assert figures.count("output_tokens", True) is None
    assert figures.count("output_tokens", 1.5) is None


def test_a_number_past_pythons_digit_limit_is_still_shown_short() -> None:
    assert figures.shown(10**5000) == f"a number of {(10**5000).bit_length()} bits"


@pytest.mark.parametrize("value", [1, 1023, 10**8 + 1, 10**400])
def test_a_window_outside_the_range_is_ignored_with_one_line(value: int) -> None:
    assert figures.window(value) is None
    note = figures.window_note("smol", value)
    assert note is not None and note.startswith("context window: smol says ")
    assert note.endswith("outside 1024..100000000: ignored (set ELELEM_CONTEXT_WINDOW to give one)")


def test_a_sane_window_is_kept_and_says_nothing() -> None:
    assert figures.window(4096) == 4096
    assert figures.window_note("smol", 4096) is None
    assert figures.window_note("smol", None) is None


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -5, 0, "4096", True])
def test_a_metadata_field_that_is_no_count_is_unknown(value: object) -> None:
    assert tokens(value) is None
