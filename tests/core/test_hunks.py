"""hunks.py: a change cut into hunks; any subset applied exactly."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from elelem_daemon.edits.hunks import DIFF_INPUT_CAP, apply, lines, split, unified, where

# Texts made of few distinct lines, so that diffs have equal runs, changes and context.
LINE = st.sampled_from(["a\n", "b\n", "c\n", "\n", "x\r\n", "tail", "é\n", "  indented\n"])
TEXT = st.lists(LINE, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT)
def test_all_hunks_give_the_new_text_and_none_the_old(old: str, new: str) -> None:
    hunks = split(old, new)
    assert apply(old, new, hunks, [h.id for h in hunks]) == new
    assert apply(old, new, hunks, []) == old


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT, st.data())
def test_a_subset_changes_exactly_its_hunks(old: str, new: str, data: st.DataObject) -> None:
    hunks = split(old, new)
    chosen = data.draw(st.sets(st.sampled_from([h.id for h in hunks]))) if hunks else set()
    text = apply(old, new, hunks, chosen)
    # Applying the rest to that text, as a change of its own, reaches the new text:
    # the subset's result lies between the two.
    a, b, out = lines(old), lines(new), lines(text)
    for hunk in hunks:
        first, last = where(hunks, chosen, hunk)
        if hunk.id in chosen:
            continue
        # a rejected hunk's old lines are still there, where `where` says
        old_lines = a[hunk.old_start - 1 : hunk.old_start - 1 + hunk.old_lines]
        if hunk.old_lines:
            assert out[first - 1 : last] == old_lines
    assert len(out) == len(a) + sum(h.new_lines - h.old_lines for h in hunks if h.id in chosen)
    assert b == lines(apply(old, new, hunks, [h.id for h in hunks]))


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT)
def test_ids_are_stable_and_the_diff_is_difflibs(old: str, new: str) -> None:
    assert split(old, new) == split(old, new)
    assert [h.id for h in split(old, new)] == list(range(1, len(split(old, new)) + 1))
    if "\r" in old + new:  # difflib's splitlines also splits at a lone "\r"
        return
    expected = "".join(
        line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), "f", "f"
        )
    )
    assert unified(old, new, "f") == expected


def test_ranges_follow_unified_headers() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 31))
    new = old.replace("line 2\n", "LINE 2\n").replace("line 20\n", "")
    first, second = split(old, new)
    assert (first.id, first.old_start, first.old_lines, first.new_start, first.new_lines) == (
        1, 1, 5, 1, 5,
    )  # fmt: skip
    assert first.diff.startswith("@@ -1,5 +1,5 @@\n line 1\n-line 2\n+LINE 2\n")
    assert (second.old_start, second.old_lines, second.new_start, second.new_lines) == (
        17, 7, 17, 6,
    )  # fmt: skip
    assert where([first, second], [1], second) == (17, 23)


def test_a_new_file_is_one_hunk_from_line_zero() -> None:
    (hunk,) = split(None, "a\nb\n")
    assert (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines) == (0, 0, 1, 2)
    assert unified(None, "a\nb\n", "f").startswith("--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n")
    assert apply(None, "a\nb\n", [hunk], []) == ""


def test_no_change_no_hunks() -> None:
    assert split("same\n", "same\n") == []
    assert unified("same\n", "same\n", "f") == ""


def test_huge_sides_are_one_hunk_and_still_exact() -> None:
    old = "x\n" * (DIFF_INPUT_CAP // 2 + 1)
    new = old + "y\n"
    (hunk,) = split(old, new)
    assert "[no diff:" in hunk.diff
    assert apply(old, new, [hunk], [1]) == new
    assert apply(old, new, [hunk], []) == old
