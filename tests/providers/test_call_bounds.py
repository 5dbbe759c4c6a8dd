"""A tool call is bounded before anything keeps it (issue 36, providers/calls.py)."""

from __future__ import annotations

import json

import pytest

from elelem_daemon.providers import calls


def test_a_long_name_is_an_unknown_tool_cut_to_the_bound() -> None:
    event = calls.doing("c1", "x" * 10_000, '{"a": 1}')
    assert event["name"] == "x" * calls.NAME_CAP + "..."
    assert event["arguments"] == {}
    assert event["error"] == (
        f'unknown tool: "{"x" * 256}..." (a name of 10000 characters; tool names take at most 256)'
    )


def test_a_name_at_the_bound_is_kept() -> None:
    event = calls.doing("c1", "y" * calls.NAME_CAP, '{"a": 1}')
    assert (event["name"], event["arguments"], "error" in event) == ("y" * 256, {"a": 1}, False)


@pytest.mark.parametrize("shape", ["text", "dict"])
def test_arguments_past_the_cap_are_an_error_and_not_kept(
    monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    monkeypatch.setattr(calls, "ARGS_CAP", 1000)
    arguments = {"text": "a" * 2000}
    event = calls.doing("c1", "write", json.dumps(arguments) if shape == "text" else arguments)
    assert event["arguments"] == {}
    assert event["error"] == (
        "tool arguments of 2012 characters, past ELELEM_TOOL_ARGS_CAP (1000); send less at a time"
    )
    within = calls.doing("c1", "write", {"text": "a" * 900})
    assert within["arguments"] == {"text": "a" * 900} and "error" not in within
