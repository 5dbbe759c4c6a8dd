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


async def test_the_example_without_a_key_ends_with_one_clear_line(
    env: dict[str, str], workdir: Path
) -> None:
    env = {k: v for k, v in env.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLE),
        "-p",
        "openai",
        "hi",
        env=env,
        cwd=str(workdir),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    out, err = await within(process.communicate(), 30)
    assert process.returncode == 1
    lines = err.decode().splitlines()
    # a first run in a fresh home also says, once, that it recorded the user's own files
    # (safety/vetted.py: issue 36); the failure itself is one clear line
    first_run = [line for line in lines if line.startswith("elelem: recorded ")]
    assert len(first_run) <= 1
    assert [line for line in lines if line not in first_run] == [
        "one_turn.py: openai: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server"
    ]
    assert "session/turn" not in out.decode()
