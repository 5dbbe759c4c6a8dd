"""A hostile client against `elelem lsp`: URIs outside the folder or of other schemes,
a huge didChange, bogus versions, unknown commands, absurd ranges. Each is refused (a
JSON-RPC error with `data.kind`, or nothing offered) and the server goes on serving."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from support.lsp import Editor, call, capabilities
from support.model import Model, reply

HOSTILE = [
    "file:///etc/passwd",
    "file:///tmp/../etc/shadow",
    "untitled:Untitled-1",
    "http://example.com/a.py",
    "jar:file:///x!/a",
    "file://",
    "",
    "file:///" + "a/" * 3000,
]


async def started(editor: Editor, environ: dict[str, str]) -> str:
    await editor.start(environ)
    await editor.initialize(capabilities())
    return editor.open("a.py")


async def still_serving(editor: Editor, uri: str) -> None:
    titles = [a.title for a in await editor.actions(uri, 0)]
    assert titles[0] == "elelem: do what the comment says"


async def test_a_hostile_uri_gets_no_action_and_runs_nothing(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    mine = await started(editor, environ)
    for uri in [*HOSTILE, folder.as_uri(), (folder / ".." / "x.py").as_uri()]:
        assert await editor.actions(uri, 0) == [], uri
        job = {"kind": "explain", "uri": uri, "lines": [0, 0]}
        with pytest.raises(JsonRpcException) as caught:
            await editor.execute("elelem.run", job)
        assert caught.value.data["kind"] == "invalid_params"
        if uri:  # "" is no document: a plain question, allowed
            with pytest.raises(JsonRpcException):
                await editor.execute("elelem.ask", "read it", uri, 0)
    assert model.posts == 0  # no turn ran
    await still_serving(editor, mine)


async def test_a_link_out_of_the_folder_is_outside(
    editor: Editor, environ: dict[str, str], folder: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("# elelem: leak me\n")
    (folder / "link.py").symlink_to(secret)
    mine = await started(editor, environ)
    assert await editor.actions((folder / "link.py").as_uri(), 0) == []
    await still_serving(editor, mine)


async def test_bogus_command_arguments_are_invalid_params(
    editor: Editor, environ: dict[str, str]
) -> None:
    mine = await started(editor, environ)
    for arguments in (
        [], [None], ["x"], [{"kind": "explain"}],
        [{"kind": "x", "uri": "file:///a", "lines": [0]}],
    ):  # fmt: skip
        with pytest.raises(JsonRpcException) as caught:
            await editor.execute("elelem.run", *arguments)
        assert caught.value.code == -32602
    for bad in ([], [""], [5], ["x" * 30_000]):
        with pytest.raises(JsonRpcException):
            await editor.execute("elelem.ask", *bad)
    for bad in ([], [0], [-1], ["3"], [True], [2**40]):
        with pytest.raises(JsonRpcException):
            await editor.execute("elelem.rewind", *bad)
    await still_serving(editor, mine)


async def test_an_unknown_command_is_an_error(editor: Editor, environ: dict[str, str]) -> None:
    mine = await started(editor, environ)
    for name in ("elelem.rm", "workbench.action.quit", "", "x" * 10_000):
        with pytest.raises(JsonRpcException) as caught:
            await editor.execute(name, "x")
        assert caught.value.code == -32602
    await still_serving(editor, mine)


async def test_absurd_ranges_offer_nothing_or_a_bounded_scan(
    editor: Editor, environ: dict[str, str]
) -> None:
    mine = await started(editor, environ)
    for start, end in ((2**31 - 1, 2**31 - 1), (5, 0), (0, 10**7), (10**9, 10**9)):
        found = await editor.actions(mine, start, end)
        assert len(found) <= 20
    await still_serving(editor, mine)


async def test_a_huge_did_change_and_bogus_versions(
    editor: Editor, environ: dict[str, str], model: Model
) -> None:
    """A document past ELELEM_FILE_CAP (1 MiB here) is kept by the server but never read
    whole: the model reads that it is too big."""
    model.queue(call("read", {"path": "a.py"}), reply("ok"))
    await editor.start({**environ, "ELELEM_FILE_CAP": str(1 << 20)})
    await editor.initialize(capabilities())
    mine = editor.open("a.py")
    editor.type(mine, "# elelem: x\n" + "y" * (2 << 20))  # 2 MiB in one change
    found = await editor.actions(mine, 0)
    assert found[0].title == "elelem: do what the comment says"
    await editor.execute("elelem.ask", "read a.py", mine, 0)
    await editor.until(editor.ended)
    read = [m["content"] for m in model.sent(-1) if m["role"] == "tool"][-1]
    assert "whole-file reads take at most" in read
    for version in (-5, 0, 2**31 - 1):  # versions going back, zero, huge
        editor.client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                text_document=t.VersionedTextDocumentIdentifier(uri=mine, version=version),
                content_changes=[
                    t.TextDocumentContentChangePartial(
                        range=t.Range(
                            start=t.Position(line=10**6, character=10**6),
                            end=t.Position(line=10**7, character=0),
                        ),
                        text="z",
                    )
                ],
            )
        )
    editor.type(mine, "# elelem: add a docstring\n")
    await still_serving(editor, mine)
    unknown = (editor.folder / "nowhere.py").as_uri()
    editor.client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=unknown, version=3),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text="x")],
        )
    )  # a change of a document never opened
    await still_serving(editor, mine)


async def test_an_unknown_provider_is_said_when_an_action_runs(
    editor: Editor, environ: dict[str, str]
) -> None:
    await editor.start(environ, "-p", "nosuch")
    await editor.initialize(capabilities())
    mine = editor.open("a.py")
    found = await editor.actions(mine, 0)
    assert found[0].title == "elelem: do what the comment says"
    with pytest.raises(JsonRpcException) as caught:
        await editor.run(found[0])
    assert caught.value.data["kind"] == "unknown_provider"
    await still_serving(editor, mine)
