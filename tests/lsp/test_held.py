"""The user's own files held as new or changed since approved (issue 36, safety/vetted.py),
over LSP: a plugin planted after the first run does not load until the user answers
`load` to a `window/showMessageRequest`; the first choice, `hold`, loads nothing; a
client without questions is told once how to load it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from support.lsp import Editor, capabilities
from support.model import Model, reply

PLANTED = """
from pathlib import Path

Path(__file__).with_suffix(".ran").touch()  # the moment the file is loaded


def register(plugin):
    @plugin.command("planted", "a planted command")
    def planted(session, args):
        session.output.say("planted ran")
"""


async def first_run(environ: dict[str, str], folder: Path) -> None:
    """`elelem ask` once: the first run records what is there (vetted.py)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "ask", "--provider", "stub", "--no-save", "hi",
        env=environ, cwd=str(folder), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert await asyncio.wait_for(process.wait(), 60) == 0


def plant(environ: dict[str, str]) -> Path:
    plugins = Path(environ["HOME"]) / ".agents" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    (plugins / "planted.py").write_text(PLANTED)
    return plugins / "planted.ran"


async def test_a_planted_plugin_loads_only_after_load_is_answered(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    await first_run(environ, folder)
    ran = plant(environ)
    model.queue(reply("one"), reply("two"))
    await editor.start(environ)
    await editor.initialize(capabilities())
    answers = iter(["hold", "load"])
    editor.answer = lambda params: next(answers) if "held" in params.message else None
    uri = editor.open("a.py")
    await editor.execute("elelem.ask", "first", uri, 0)
    await editor.until(editor.ended)
    assert not ran.exists()  # `hold`, the first choice: not one line of it ran
    asked = [m for m in editor.of("showMessageRequest") if "held" in m.message]
    assert len(asked) == 1 and "planted.py" in asked[0].message
    assert [a.title for a in asked[0].actions] == ["hold", "load"]
    await editor.stop()
    again = Editor(folder)
    try:
        await again.start(environ)
        await again.initialize(capabilities())
        again.answer = lambda params: "load" if "held" in params.message else None
        await again.execute("elelem.ask", "second", again.open("a.py"), 0)
        await again.until(again.ended)
        assert ran.exists()  # the user's `load`: it loads
    finally:
        await again.stop()


async def test_without_questions_it_stays_held_and_is_said_once(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    await first_run(environ, folder)
    ran = plant(environ)
    model.queue(reply("one"))
    await editor.start(environ)
    await editor.initialize(capabilities(questions=False))
    await editor.execute("elelem.ask", "first", editor.open("a.py"), 0)
    await editor.until(editor.ended)
    assert not ran.exists()
    told = [m.message for m in editor.of("showMessage") if "held, not loaded" in m.message]
    assert len(told) == 1 and "elelem trust --user-files" in told[0]
