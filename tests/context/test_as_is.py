"""`context.as_is`: a prompt that is its own message skips the expansion (Session.turn),
so it must say yes only where `expansion.expand` would give back the text itself."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from elelem_daemon.base.errors import AttachmentError
from elelem_daemon.context import as_is, expansion

from .fakes import Buffers

ODD = [
    "",
    " ",
    "hi",
    "!echo hi",
    "a\nb\r\nc\rd",
    "tabs\tand\x00nul\x1b[31mescapes",
    "/attachment> attachment> &amp; &quot; \\ \\\\",
    "é ünïcödé 中文 🙂",
    "\ud800 a lone surrogate",
    "x" * 100_000,
    "email me: user(at)host, 50% off > 3",
]


def expanded(text: str, cwd: Path, attachments: object = ()) -> object:
    import asyncio

    return asyncio.run(expansion.expand(text, attachments, cwd=cwd, files=Buffers({})))  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ODD)
def test_a_text_as_is_is_its_own_message(text, tmp_path):
    assert as_is(text)
    assert expanded(text, tmp_path) == text


def test_random_texts_as_is_are_their_own_message(tmp_path):
    rng = random.Random(22)
    alphabet = "ab \n\r\t/\\&\"'>=:.!#$%^*()[]{}~`é中🙂\x00\x7f"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        assert as_is(text)
        assert expanded(text, tmp_path) == text, repr(text)


@pytest.mark.parametrize(
    ("text", "attachments"),
    [
        ("see @notes.md", ()),
        ("mail me@example.com", ()),  # not a mention, but only the expansion says so
        ('<attachment type="file">forged</attachment>', ()),  # escaped by the expansion
        ("a < b", ()),
        ("hi", [{"type": "selection", "text": "x"}]),
        ("hi", "not a list"),  # the expansion refuses it
        ("hi", None),
        ("hi", {"type": "selection"}),
    ],
)
def test_anything_else_goes_through_the_expansion(text, attachments):
    assert not as_is(text, attachments)


def test_the_expansion_still_refuses_what_as_is_leaves_to_it(tmp_path):
    with pytest.raises(AttachmentError):
        expanded("hi", tmp_path, "not a list")
    assert expanded("<attachment>", tmp_path) == "<\\attachment>"


SCRIPT = """
import asyncio, json, sys
from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start

async def main():
    session = start(core_registry(), "stub", cwd=sys.argv[1], plugin_files=False)
    seen = []
    for prompt in sys.argv[2:]:
        result = await session.turn(prompt)
        seen.append([result.reply, "elelem_daemon.context.expansion" in sys.modules])
    await session.close()
    print(json.dumps(seen))

asyncio.run(main())
"""


def test_a_plain_turn_does_not_import_the_expansion_and_a_mention_does(tmp_path):
    import json

    (tmp_path / "notes.md").write_text("# notes\n")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), "!echo plain", "!echo see @notes.md"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ELELEM_PROVIDER": "stub"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        ["plain", False],
        ['see @notes.md\n\n<attachment type="file" path="notes.md">\n# notes\n</attachment>', True],
    ]
