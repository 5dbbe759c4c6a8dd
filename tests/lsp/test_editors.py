"""The same flow with each editor's own `initialize` params (tests/lsp/clients/, taken
from each client's source, the commit named in `_source`): Helix (progress, no
questions, no showDocument), Emacs 28's Eglot 1.9 (no window capabilities at all) and
Sublime LSP (all of them). A code action on a marked comment, its edit as a versioned
applyEdit, the turn's start and end where the editor can show them, and a permission
question asked where it can be, else decided by a rule set ahead or refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t
from support.lsp import Editor, call
from support.model import Model, reply

EDITORS = {
    # editor: (shows progress, asks questions, opens the transcript)
    "helix": (True, False, False),
    "eglot": (False, False, False),
    "sublime": (True, True, True),
}


@pytest.mark.parametrize("name", sorted(EDITORS))
async def test_a_marked_comment_in_each_editor(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path, name: str
) -> None:
    progress, questions, documents = EDITORS[name]
    model.queue(
        call("read", {"path": "a.py"}, "call_1"),
        call("edit", {"path": "a.py", "old": "def f():\n", "new": 'def f():\n    """One."""\n'},
             "call_2"),
        call("execute", {"command": "touch made"}, "call_3"),
        reply("Done."),
    )  # fmt: skip
    await editor.start(environ)
    result = await editor.initialize_as(name)
    assert isinstance(result.capabilities.code_action_provider, t.CodeActionOptions)
    editor.answer = lambda params: "allow"
    uri = editor.open("a.py")
    found = await editor.actions(uri, 0)
    assert found[0].title == "elelem: do what the comment says"
    assert found[0].command is not None  # Eglot 1.9 has no codeAction/resolve
    await editor.run(found[0])
    await editor.until(editor.ended)

    (edit,) = editor.of("applyEdit")
    assert edit.edit.document_changes[0].text_document.version == 1
    assert '"""One."""' in editor.buffers[uri][1]
    assert '"""One."""' not in (folder / "a.py").read_text()  # the buffer, not the disk
    assert bool(editor.of("progress")) is progress
    shown = [p.message for p in editor.of("showMessage")]
    if not progress:
        assert any(m.startswith("elelem: working") for m in shown)
    assert bool(editor.of("showDocument")) is documents
    if not documents:
        assert any(m.startswith("elelem: done") and m.endswith(".md") for m in shown)
    assert (folder / "made").exists() is questions  # asked and allowed, or refused
    assert bool(editor.of("showMessageRequest")) is questions
    if not questions:
        assert sum("could not ask" in m for m in shown) == 1


@pytest.mark.parametrize("name", ["helix", "eglot"])
async def test_without_questions_a_rule_set_ahead_decides_in_each_editor(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path, name: str
) -> None:
    model.queue(call("execute", {"command": "touch made"}), reply("Done."))
    await editor.start(environ, "--allow", "execute:touch*")
    await editor.initialize_as(name)
    await editor.execute("elelem.ask", "make it")
    await editor.until(editor.ended)
    assert (folder / "made").exists()
    assert editor.of("showMessageRequest") == []
