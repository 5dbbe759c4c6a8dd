"""A turn started from the LSP face is a stored session like any other: `elelem
sessions` lists it, `elelem chat --resume` continues it; `elelem.undo` takes its edit
back by checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.lsp import Editor, call, capabilities
from support.model import Model, reply


def elelem(env: dict[str, str], cwd: Path, *args: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "elelem_daemon", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_turn_shows_in_sessions_and_resumes_in_chat(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    model.queue(reply("The kumquat is the answer."))
    await editor.start(environ)
    await editor.initialize(capabilities())
    uri = editor.open("a.py")
    await editor.execute("elelem.ask", "what is the answer?", uri, 1)
    await editor.until(editor.ended)
    await editor.stop()

    listing = elelem(environ, folder, "sessions", "--json")
    (entry,) = [json.loads(line) for line in listing.splitlines()]
    assert entry["cwd"] == str(folder)
    assert entry["title"].startswith("what is the answer?")

    model.queue(reply("still kumquat"))
    out = elelem(environ, folder, "chat", "--resume", entry["sessionId"], "-", stdin="and now?\n")
    assert f"resumed session {entry['sessionId'][:8]}" in out
    assert "The kumquat is the answer." in out  # redrawn
    sent = json.dumps(model.sent(-1))
    assert "what is the answer?" in sent and "The kumquat is the answer." in sent


async def test_undo_takes_the_turns_edit_back(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    """Without applyEdit the edit is on the disk, and `elelem.undo` restores it from the
    turn's checkpoint (a git folder: checkpoints need one)."""
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    model.queue(
        call("edit", {"path": "a.py", "old": "return 1", "new": "return 2"}),
        reply("changed"),
    )
    await editor.start(environ)
    await editor.initialize(capabilities(apply_edit=False, questions=True))
    editor.answer = lambda params: "yes"
    await editor.execute("elelem.ask", "change it")
    await editor.until(editor.ended)
    assert "return 2" in (folder / "a.py").read_text()
    editor.got.clear()  # its progress end came last: nothing of the first turn is left
    assert (await editor.execute("elelem.undo"))["started"] is True
    await editor.until(editor.ended)
    said = list((Path(environ["XDG_STATE_HOME"]) / "elelem" / "lsp").glob("*.md"))[0].read_text()
    assert "return 1" in (folder / "a.py").read_text(), said
