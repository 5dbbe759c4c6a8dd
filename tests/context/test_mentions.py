"""`@` references typed in a prompt: what is one, what is not, and the message they make."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_daemon.base.errors import AttachmentError
from elelem_daemon.context import expansion
from elelem_daemon.context.mentions import MAX_MENTIONS, Mention, find

from .fakes import Buffers

APP = "print('hi')\n"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(APP)
    (tmp_path / "README.md").write_text("# r\n")
    (tmp_path / "my file.txt").write_text("")
    return tmp_path


def paths(text: str, cwd: Path) -> list[str]:
    return [m.path for m in find(text, cwd)[1]]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("@src/app.py", ["src/app.py"]),
        ("explain @src/app.py please", ["src/app.py"]),
        ("see @src/app.py.", ["src/app.py"]),
        ("(@src/app.py), @README.md!", ["src/app.py", "README.md"]),
        ('"@README.md"', ["README.md"]),
        ("@src/ and @src", ["src/"]),
        ("@src/./app.py", ["src/app.py"]),
        ("@src/app.py @src/app.py", ["src/app.py"]),
        ("line\n@README.md", ["README.md"]),
    ],
)
def test_a_mention_is_an_at_before_an_existing_path(cwd: Path, text: str, found: list[str]) -> None:
    assert paths(text, cwd) == found


@pytest.mark.parametrize(
    "text",
    [
        "mail me@src.app or me@README.md",  # an e-mail address
        "@decorator and @someone",  # no such path
        "@/etc/passwd",  # outside the cwd
        "@../outside",
        "@~/.ssh/id_rsa",
        "@.",
        "`@src/app.py`",  # a code span
        "``a `@src/app.py` b``",
        "```\n@src/app.py\n```",  # a fenced block
        "~~~python\n@README.md\n~~~",
        "  ```\n@README.md\n",  # an unclosed fence runs to the end
        "@my file.txt",  # a path with a space: attach it from the editor
        "x@src/app.py",
    ],
)
def test_what_is_not_a_mention(cwd: Path, text: str) -> None:
    assert paths(text, cwd) == []


def test_a_link_out_of_the_cwd_is_not_a_mention(cwd: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("out") / "secret.txt"
    outside.write_text("s")
    (cwd / "link.txt").symlink_to(outside)
    assert paths("@link.txt", cwd) == []


def test_code_is_left_alone_and_the_rest_still_counts(cwd: Path) -> None:
    text = "```py\n@README.md\n```\nand `@src/app.py` but @src/app.py"
    assert paths(text, cwd) == ["src/app.py"]
    assert find(text, cwd)[0] == text


def test_an_escaped_at_is_text_without_its_backslash(cwd: Path) -> None:
    assert find(r"type \@src/app.py literally", cwd) == ("type @src/app.py literally", [])
    assert find(r"`\@src/app.py`", cwd) == (r"`\@src/app.py`", [])  # code is untouched


def test_line_ranges(cwd: Path) -> None:
    _, found = find("@src/app.py:10-20 and @README.md:3, @src/app.py:1-2.", cwd)
    assert found == [
        Mention("src/app.py:10-20", "src/app.py", 10, 20),
        Mention("README.md:3", "README.md", 3, 3),
        Mention("src/app.py:1-2", "src/app.py", 1, 2),
    ]


@pytest.mark.parametrize("word", ["@src/app.py:0", "@src/app.py:9-3"])
def test_a_bad_range_on_an_existing_file_is_an_error(cwd: Path, word: str) -> None:
    with pytest.raises(AttachmentError) as caught:
        find(f"see {word}", cwd)
    assert caught.value.data == {"reason": "invalid", "mention": word, "field": "text"}


def test_a_colon_number_on_a_missing_file_is_text(cwd: Path) -> None:
    assert paths("at @host:8080", cwd) == []


def test_at_most_so_many_mentions(cwd: Path) -> None:
    for n in range(MAX_MENTIONS + 1):
        (cwd / f"f{n}.txt").write_text("")
    text = " ".join(f"@f{n}.txt" for n in range(MAX_MENTIONS + 1))
    with pytest.raises(AttachmentError) as caught:
        find(text, cwd)
    assert caught.value.data["reason"] == "too_many"
    assert len(find(" ".join(f"@f{n}.txt" for n in range(MAX_MENTIONS)), cwd)[1]) == MAX_MENTIONS


# -- the message they make ----------------------------------------------------------------
async def test_mentions_become_the_same_blocks_as_attachments(cwd: Path) -> None:
    by_mention = await expansion.expand("explain @src/app.py:1", [], cwd=cwd, files=Buffers({}))
    by_attachment = await expansion.expand(
        "explain @src/app.py:1",
        [
            {
                "type": "file",
                "path": "src/app.py",
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            }
        ],
        cwd=cwd,
        files=Buffers({}),
        mention=False,
    )
    assert (
        by_mention
        == by_attachment
        == (
            'explain @src/app.py:1\n\n<attachment type="file" path="src/app.py" lines="1-1">\n'
            f"{APP}</attachment>"
        )
    )


async def test_mentions_come_first_and_a_file_also_attached_is_one_block(cwd: Path) -> None:
    got = await expansion.expand(
        "@src/app.py and @README.md",
        [{"type": "file", "path": "src/app.py"}, {"type": "folder", "path": "src"}],
        cwd=cwd,
        files=Buffers({}),
    )
    assert got == (
        "@src/app.py and @README.md\n\n"
        f'<attachment type="file" path="src/app.py">\n{APP}</attachment>\n\n'
        '<attachment type="file" path="README.md">\n# r\n</attachment>\n\n'
        '<attachment type="folder" path="src/">\nsrc/app.py\n</attachment>'
    )


async def test_a_mentioned_file_is_read_through_the_files_port(cwd: Path) -> None:
    files = Buffers({cwd / "src" / "app.py": "unsaved\n"})
    got = await expansion.expand("@src/app.py", [], cwd=cwd, files=files)
    assert got.endswith('path="src/app.py">\nunsaved\n</attachment>')


async def test_a_mentioned_binary_file_refuses_the_message(cwd: Path) -> None:
    (cwd / "a.out").write_bytes(b"\x7fELF\x00")
    with pytest.raises(AttachmentError) as caught:
        await expansion.expand("run @a.out", [], cwd=cwd, files=Buffers({}))
    assert caught.value.data == {
        "reason": "binary",
        "type": "file",
        "mention": "@a.out",
        "field": "text",
    }
    assert str(caught.value) == "@a.out (file): a.out is a binary file, not text"


async def test_escapes_leave_the_message_and_nothing_is_attached(cwd: Path) -> None:
    got = await expansion.expand(r"mail \@README.md", [], cwd=cwd, files=Buffers({}))
    assert got == "mail @README.md"


# -- hostile text: bounded work, whatever is typed or pasted ---------------------------------
def finishes(text: str, cwd: Path, seconds: float = 20.0) -> tuple[str, list[Mention]]:
    """find, in a thread; a hang guard (quadratic work on these texts takes hours)."""
    import threading

    done: list[tuple[str, list[Mention]]] = []
    worker = threading.Thread(target=lambda: done.append(find(text, cwd)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert done, f"find did not finish within {seconds} s"
    return done[0]


def test_unmatched_backtick_runs_are_linear(cwd: Path) -> None:
    text = "``" + " `x" * 200_000 + " @README.md"
    assert [m.path for m in finishes(text, cwd)[1]] == ["README.md"]


def test_many_ats_inside_many_spans(cwd: Path) -> None:
    text = "`@x` " * 100_000 + "@README.md"
    assert [m.path for m in finishes(text, cwd)[1]] == ["README.md"]


def test_a_long_tail_of_punctuation_or_ranges_is_bounded(cwd: Path) -> None:
    tail = "@README.md" + "." * 200_000 + " @src/app.py" + ":1" * 100_000
    text = tail + " " + " ".join(["@nope"] * 50_000)
    assert finishes(text, cwd)[1] == []  # too long to be a path; the rest are not paths


def test_only_so_many_at_words_are_looked_up(cwd: Path, monkeypatch) -> None:
    import elelem_daemon.context.mentions as mentions

    looked: list[str] = []
    real = mentions.resolve
    monkeypatch.setattr(mentions, "resolve", lambda w, c: looked.append(w) or real(w, c))
    find(" ".join(["@nope"] * 1000) + " @README.md", cwd)
    assert len(looked) == mentions.MAX_CANDIDATES


def test_nested_openers_in_one_long_word(cwd: Path) -> None:
    assert finishes("(@" * 300_000, cwd)[1] == []
