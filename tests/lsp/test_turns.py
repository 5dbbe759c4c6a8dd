"""`elelem lsp` end to end, driven by pygls's own LanguageClient: what initialize
declares, a code action on a marked comment whose edit comes back as a versioned
`workspace/applyEdit` with `$/progress` begin, reports and end, and a stale version the
model reads as a conflict."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from support.lsp import Editor, call, capabilities
from support.model import Model, reply

DOCSTRING = '# elelem: add a docstring\ndef f():\n    """One."""\n    return 1\n'


def script_docstring(model: Model, gate: threading.Event | None = None) -> None:
    model.queue(
        call("read", {"path": "a.py"}, "call_1"),
        call(
            "edit",
            {"path": "a.py", "old": "def f():\n", "new": 'def f():\n    """One."""\n'},
            "call_2",
            gate,
        ),
        reply("Added a docstring."),
    )


async def test_initialize_declares_actions_commands_and_progress(
    editor: Editor, environ: dict[str, str]
) -> None:
    await editor.start(environ)
    result = await editor.initialize(capabilities())
    caps = result.capabilities
    assert isinstance(caps.code_action_provider, t.CodeActionOptions)
    assert caps.code_action_provider.work_done_progress is True
    assert caps.code_action_provider.resolve_provider is False
    assert caps.execute_command_provider is not None
    assert set(caps.execute_command_provider.commands) >= {
        "elelem.run", "elelem.ask", "elelem.cancel", "elelem.undo", "elelem.rewind",
    }  # fmt: skip
    assert result.server_info is not None and result.server_info.name == "elelem"


async def test_a_marked_comment_runs_a_turn_whose_edit_is_a_versioned_apply_edit(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    script_docstring(model)
    await editor.start(environ)
    await editor.initialize(capabilities())
    uri = editor.open("a.py")
    found = await editor.actions(uri, 0)
    titles = [a.title for a in found]
    assert titles[0] == "elelem: do what the comment says"
    assert "elelem: explain" in titles and "elelem: write a test for this" in titles
    assert all(a.command is not None for a in found)  # no codeAction/resolve needed
    answer = await editor.run(found[0])
    assert answer["started"] is True  # answered at once; the turn runs on
    await editor.until(editor.ended)

    edits = editor.of("applyEdit")
    assert len(edits) == 1
    change = edits[0].edit.document_changes[0]
    assert change.text_document.uri == uri
    assert change.text_document.version == 1  # the version the agent read
    assert editor.buffers[uri][1] == DOCSTRING  # the buffer changed ...
    assert (folder / "a.py").read_text().startswith("# elelem: add a docstring\ndef f():\n    ret")
    progress = editor.progress()
    assert progress[0][0] == "begin" and progress[-1][0] == "end"
    reports = [message for kind, message in progress if kind == "report"]
    assert "Read `a.py`" in reports and "Edit `a.py`" in reports
    tokens = {p.token for p in editor.of("progress")}
    assert tokens == {editor.of("create")[0].token}
    prompt = model.user(0)
    assert "add a docstring" in (prompt if isinstance(prompt, str) else str(prompt))
    assert "Added a docstring." in str(model.sent(-1)) or model.posts == 3
    shown = editor.of("showDocument")
    assert len(shown) == 1 and shown[0].take_focus is False  # it edited: the code keeps focus
    transcript = Path(shown[0].uri.removeprefix("file://")).read_text()
    assert "Added a docstring." in transcript and "Edit `a.py`" in transcript


async def test_a_stale_version_is_a_conflict_the_model_reads(
    editor: Editor, environ: dict[str, str], model: Model
) -> None:
    gate = threading.Event()
    script_docstring(model, gate)
    await editor.start(environ)
    await editor.initialize(capabilities())
    uri = editor.open("a.py")
    found = await editor.actions(uri, 0)
    await editor.run(found[0])
    await editor.until(lambda: model.posts >= 2)  # the model has read the file
    editor.type(uri, "# the user typed\n" + editor.buffers[uri][1])
    await editor.actions(uri, 0)  # answered after the change before it: the server has it
    gate.set()
    await editor.until(editor.ended)
    assert editor.of("applyEdit") == []  # refused before it was sent: never a silent write
    results = [m for m in model.sent(-1) if m["role"] == "tool"]
    assert "conflict" in results[-1]["content"]
    assert editor.buffers[uri][1].startswith("# the user typed\n")


async def test_an_edit_the_editor_refuses_is_a_conflict(
    editor: Editor, environ: dict[str, str], model: Model
) -> None:
    script_docstring(model)
    await editor.start(environ)
    await editor.initialize(capabilities())
    editor.apply = lambda params: t.ApplyWorkspaceEditResult(
        applied=False, failure_reason="version mismatch"
    )
    uri = editor.open("a.py")
    await editor.run((await editor.actions(uri, 0))[0])
    await editor.until(editor.ended)
    assert len(editor.of("applyEdit")) == 1
    results = [m for m in model.sent(-1) if m["role"] == "tool"]
    assert "conflict" in results[-1]["content"]


async def test_without_apply_edit_the_disk_is_written(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    script_docstring(model)
    await editor.start(environ)
    await editor.initialize(capabilities(apply_edit=False, progress=False, documents=False))
    uri = editor.open("a.py")
    await editor.run((await editor.actions(uri, 0))[0])
    await editor.until(editor.ended)
    assert editor.of("applyEdit") == []
    assert (folder / "a.py").read_text() == DOCSTRING
    messages = [p.message for p in editor.of("showMessage")]
    assert any(m.startswith("elelem: working") for m in messages)
    assert any(m.startswith("elelem: done") and ".md" in m for m in messages)


async def test_review_findings_become_diagnostics_each_with_a_fix(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    model.queue(reply("Findings:\n- a.py:2: `f` has no docstring\n- ../outside.py:1: no\nok"))
    await editor.start(environ)
    await editor.initialize(capabilities())
    uri = editor.open("a.py")
    found = await editor.actions(uri, 1)  # the folder's modes, from the first request
    (reviewing,) = [a for a in found if a.title.startswith("elelem: review this")]
    await editor.run(reviewing)
    await editor.until(editor.ended)
    assert "path:line: finding" in str(model.user(0))
    assert "review mode" in json.dumps(model.sent(0))
    (published,) = editor.of("diagnostics")
    assert published.uri == uri
    (finding,) = published.diagnostics
    assert (finding.source, finding.range.start.line) == ("elelem", 1)
    assert finding.message == "`f` has no docstring"
    fixes = await editor.actions(uri, 1, diagnostics=[finding])
    assert fixes[0].title == "elelem: fix this diagnostic"
    assert fixes[0].command is not None
    assert fixes[0].command.arguments[0]["text"] == "`f` has no docstring"
    model.queue(reply("fixed"))
    editor.got.clear()
    await editor.run(fixes[0])  # the review's mode was for its turn: this one may edit
    await editor.until(editor.ended)
    assert "review mode" not in json.dumps(model.sent(-1)[0])


async def test_reads_see_the_unsaved_buffer(
    editor: Editor, environ: dict[str, str], model: Model
) -> None:
    model.queue(call("read", {"path": "a.py"}), reply("read"))
    await editor.start(environ)
    await editor.initialize(capabilities())
    uri = editor.open("a.py", "# only in the buffer\n")
    editor.type(uri, "# only in the buffer, typed again\n")
    await editor.execute("elelem.ask", "read a.py", uri, 0)
    await editor.until(editor.ended)
    (read,) = [m["content"] for m in model.sent(-1) if m["role"] == "tool"]
    assert "only in the buffer, typed again" in read


@pytest.mark.parametrize("resources", [["create", "rename", "delete"], None])
async def test_a_new_file_is_a_create_file_only_where_the_client_takes_them(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path, resources: Any
) -> None:
    model.queue(call("write", {"path": "new.py", "content": "x = 1\n"}), reply("made"))
    await editor.start(environ)
    await editor.initialize(capabilities(resources=resources))
    await editor.execute("elelem.ask", "make new.py")
    await editor.until(editor.ended)
    uri = editor.uri("new.py")
    if resources:
        (edit,) = editor.of("applyEdit")
        create, change = edit.edit.document_changes
        assert isinstance(create, t.CreateFile) and create.uri == uri
        assert change.text_document.version is None
        assert editor.buffers[uri][1] == "x = 1\n"
        assert not (folder / "new.py").exists()  # a buffer, until the user saves it
    else:
        assert editor.of("applyEdit") == []
        assert (folder / "new.py").read_text() == "x = 1\n"  # the disk, as in every face


async def test_explain_a_selection_opens_the_transcript_with_the_focus(
    editor: Editor, environ: dict[str, str], model: Model
) -> None:
    model.queue(reply("`f` returns one."))
    await editor.start(environ)
    await editor.initialize(capabilities())
    uri = editor.open("a.py")
    found = await editor.actions(uri, 1, 2)  # the selection: lines 2-3
    (explain,) = [a for a in found if a.title == "elelem: explain"]
    await editor.run(explain)
    await editor.until(editor.ended)
    prompt = str(model.user(0))
    assert "a.py, lines 2-3" in prompt and "2: def f():" in prompt and "3:     return 1" in prompt
    (shown,) = editor.of("showDocument")
    assert shown.take_focus is True  # nothing was edited: the reply is what to read
    assert "`f` returns one." in Path(shown.uri.removeprefix("file://")).read_text()


async def test_a_failed_call_is_a_failure_in_the_progress_and_the_transcript(
    editor: Editor, environ: dict[str, str], model: Model
) -> None:
    """Issue 40: `list` of a missing path comes back `ok: true` with exit status 2 (what
    the model reads); the editor sees a failure, as every face does."""
    model.queue(
        call("list", {"path": "missing"}, "call_1"),
        call("grep", {"pattern": "no such words anywhere"}, "call_2"),  # exit 1: fine
        reply("Nothing there."),
    )
    await editor.start(environ)
    await editor.initialize(capabilities())
    uri = editor.open("a.py")
    found = await editor.actions(uri, 0)
    await editor.run(found[0])
    await editor.until(editor.ended)
    reports = [message for kind, message in editor.progress() if kind == "report"]
    failed = [message for message in reports if "✗" in message]
    assert len(failed) == 1 and "missing" in failed[0] and "exit 2" in failed[0], reports
    (shown,) = editor.of("showDocument")
    transcript = Path(shown.uri.removeprefix("file://")).read_text()
    lines = [line for line in transcript.splitlines() if line.startswith("- ")]
    assert len(lines) == 2 and "✗ exit 2" in lines[0] and "✗" not in lines[1], transcript
