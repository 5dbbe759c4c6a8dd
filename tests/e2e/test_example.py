"""examples/one_turn.py runs one turn over stdio."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from .conftest import within

pytestmark = pytest.mark.e2e
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "one_turn.py"


async def test_the_example_drives_one_turn(env: dict[str, str], workdir: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLE),
        "!tool list {}",
        env=env,
        cwd=str(workdir),
        stdout=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    out, _ = await within(process.communicate(), 30)
    text = out.decode()
    assert process.returncode == 0
    assert "event/doing" in text and "event/result" in text
    assert text.rstrip().splitlines()[-1] == (
        'session/turn -> {"reply": "done.", "stopReason": "end_turn", "turnId": 1}'
    )
