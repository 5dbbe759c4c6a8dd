"""What the LSP face offers, as data: marked comments in every comment syntax, one fix
per diagnostic, the modes and skills, each job checked again when it comes back; and
the one TextEdit a change becomes."""

from __future__ import annotations

import pytest

from elelem_daemon.faces.lsp import actions
from elelem_daemon.faces.lsp.documents import edit_of, lines_of

pytestmark: list[pytest.MarkDecorator] = []


@pytest.mark.parametrize(
    "line",
    [
        "# elelem: add a docstring",
        "    ## elelem: add a docstring",
        "// elelem: add a docstring",
        "-- elelem: add a docstring",
        ";; elelem: add a docstring",
        "/* elelem: add a docstring */",
        "<!-- elelem: add a docstring -->",
        "% elelem: add a docstring",
    ],
)
def test_a_marked_comment_in_each_syntax(line: str) -> None:
    assert actions.marked(line) == "add a docstring"


@pytest.mark.parametrize(
    "line", ["x = 1  # elelem: not alone", "# elelem:", "# elelem:   ", "print('elelem: x')"]
)
def test_not_a_marked_comment(line: str) -> None:
    assert actions.marked(line) is None


def test_offered_on_a_comment_a_diagnostic_modes_and_skills() -> None:
    lines = ["# elelem: add a docstring\n", "def f():\n", "    return 1\n"]
    found = actions.offered(
        "file:///p/a.py",
        lines,
        0,
        2,
        [(1, 1, "missing docstring")],
        [("review", "find problems"), ("bad name!", "")],
        [("tidy", "tidies")],
    )
    titles = [title for title, _, _ in found]
    assert titles[:2] == ["elelem: do what the comment says", "elelem: fix this diagnostic"]
    assert "elelem: explain" in titles and "elelem: write a test for this" in titles
    assert "elelem: review this (find problems)" in titles
    assert "elelem: skill tidy: tidies" in titles
    assert not any("bad name" in title for title in titles)
    comment = found[0][2]
    assert (comment.kind, comment.start, comment.text) == ("comment", 0, "add a docstring")
    for _, _, job in found:  # what goes out comes back unchanged
        assert actions.job_of(job.to_wire()) == job


def test_several_diagnostics_are_told_apart() -> None:
    found = actions.offered("file:///a", ["x\n"], 0, 0, [(0, 0, "one"), (0, 0, "two")], [], [])
    assert [t for t, _, _ in found][:2] == [
        "elelem: fix this diagnostic: one",
        "elelem: fix this diagnostic: two",
    ]


@pytest.mark.parametrize(
    "value",
    [
        None,
        "run",
        [],
        {"kind": "rm", "uri": "file:///a", "lines": [0, 0]},
        {"kind": "explain", "uri": 3, "lines": [0, 0]},
        {"kind": "explain", "uri": "file:///a", "lines": [0]},
        {"kind": "explain", "uri": "file:///a", "lines": [-1, 0]},
        {"kind": "explain", "uri": "file:///a", "lines": [0, 10**12]},
        {"kind": "explain", "uri": "file:///a", "lines": [True, 0]},
        {"kind": "explain", "uri": "file:///a", "lines": [0, 0], "text": 5},
        {"kind": "explain", "uri": "x" * 5000, "lines": [0, 0]},
        {"kind": "mode", "uri": "file:///a", "lines": [0, 0]},
        {"kind": "mode", "uri": "file:///a", "lines": [0, 0], "name": "../x"},
    ],
)
def test_a_bogus_job_is_refused(value: object) -> None:
    with pytest.raises(actions.BadJob):
        actions.job_of(value)


def test_an_absurd_range_scans_a_bounded_number_of_lines() -> None:
    lines = ["# elelem: x\n"] * 10
    found = actions.offered("file:///a", lines, 0, 10**6, [], [], [])
    assert sum(1 for _, _, job in found if job.kind == "comment") == actions.MARKS_OFFERED
    with pytest.raises(actions.BadJob):
        actions.offered("file:///a", lines, 0, 10**9, [], [], [])


def test_a_quote_is_cut() -> None:
    quoted = actions.quote(["x" * 1000 + "\n"] * 100, 0, 99)
    assert len(quoted) <= actions.QUOTE_CAP + 20 and quoted.endswith("[... cut]")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nX\nc\n"),
        ("a", "a\nb"),
        ("", "x\n"),
        ("a\nb", "a\nc"),
        ("x = 1\n", '"""doc"""\nx = 1\n'),
        ("a\r\nb\r\n", "a\r\nc\r\n"),
        ("é😀\n", "é😀!\n"),
        ("a\x0cb\n", "a\x0cc\n"),  # a form feed is no line break in LSP
    ],
)
def test_one_edit_turns_old_into_new(old: str, new: str) -> None:
    from support.lsp import replace

    edit = edit_of(old, new)
    assert replace(old, edit) == new
    assert "".join(lines_of(old)) == old


def test_an_edit_ends_on_the_last_line_in_utf16_units() -> None:
    edit = edit_of("a😀", "b")
    assert (edit.range.end.line, edit.range.end.character) == (0, 3)  # 😀 is two units
    assert edit_of("a😀", "b", "utf-8").range.end.character == 5
    assert edit_of("a😀", "b", "utf-32").range.end.character == 2
