"""Driving `elelem lsp` from a test: pygls's own LanguageClient, spawned over stdio, with
every server-to-client message recorded and the server requests answered as a test
says; and a scripted model (tests/support/model.py) whose replies call tools.

The client's converter reads a code action whose `command` is an object as a
CodeAction (pygls's default picks Command for it and drops the arguments).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

from lsprotocol import types as t
from providers.replay import Gate, Reply
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter

HERE = Path(__file__).resolve().parent
INITIALIZE = HERE.parent / "lsp" / "clients"  # the editors' initialize params, as data


def converter() -> Any:
    made = default_converter()

    def pick(obj: Any, _: Any) -> Any:
        kind = t.Command if isinstance(obj.get("command"), str) else t.CodeAction
        return made.structure(obj, kind)

    made.register_structure_hook(Union[t.Command, t.CodeAction], pick)  # noqa: UP007
    return made


def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    data = {"id": "c1", "object": "chat.completion.chunk", "model": "local", "choices": [choice]}
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def call(name: str, arguments: dict[str, Any], ident: str = "call_1", gate: Any = None) -> Reply:
    """A streamed reply that calls one tool (OpenAI's wire format)."""
    tool = {
        "index": 0,
        "id": ident,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    body: list[Any] = [Gate(gate)] if gate is not None else []
    body += [
        event({"role": "assistant", "tool_calls": [tool]}),
        event({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]
    return Reply(body)


def capabilities(
    apply_edit: bool = True,
    progress: bool = True,
    questions: bool = True,
    documents: bool = True,
    resources: list[str] | None = None,
) -> dict[str, Any]:
    """A client's capabilities, as JSON (Neovim-like when every flag is on)."""
    window: dict[str, Any] = {"workDoneProgress": progress}
    if questions:
        window["showMessage"] = {"messageActionItem": {"additionalPropertiesSupport": False}}
    if documents:
        window["showDocument"] = {"support": True}
    workspace: dict[str, Any] = {"applyEdit": apply_edit}
    edit: dict[str, Any] = {"documentChanges": True}
    if resources:
        edit["resourceOperations"] = resources
    workspace["workspaceEdit"] = edit
    return {"workspace": workspace, "window": window}


class Editor:
    """A scripted editor: a LanguageClient, what the server sent, how it answers."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.client = LanguageClient("elelem-test", "1", converter_factory=converter)
        self.got: list[tuple[str, Any]] = []
        self.changed = asyncio.Event()
        self.apply: Callable[[t.ApplyWorkspaceEditParams], t.ApplyWorkspaceEditResult] = (
            self.apply_to_buffers
        )
        self.answer: Callable[[t.ShowMessageRequestParams], str | None] = lambda params: None
        self.buffers: dict[str, tuple[int, str]] = {}  # uri -> (version, text)
        self.refuse_stale = True
        client = self.client

        @client.feature(t.WORKSPACE_APPLY_EDIT)
        def applied(ls: Any, params: t.ApplyWorkspaceEditParams) -> Any:
            self.record("applyEdit", params)
            return self.apply(params)

        @client.feature(t.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(ls: Any, params: t.WorkDoneProgressCreateParams) -> None:
            self.record("create", params)

        @client.feature(t.PROGRESS)
        def progress(ls: Any, params: t.ProgressParams) -> None:
            self.record("progress", params)

        @client.feature(t.WINDOW_SHOW_MESSAGE)
        def show(ls: Any, params: t.ShowMessageParams) -> None:
            self.record("showMessage", params)

        @client.feature(t.WINDOW_LOG_MESSAGE)
        def log(ls: Any, params: t.LogMessageParams) -> None:
            self.record("logMessage", params)

        @client.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
        def ask(ls: Any, params: t.ShowMessageRequestParams) -> Any:
            self.record("showMessageRequest", params)
            title = self.answer(params)
            return None if title is None else t.MessageActionItem(title=title)

        @client.feature(t.WINDOW_SHOW_DOCUMENT)
        def document(ls: Any, params: t.ShowDocumentParams) -> Any:
            self.record("showDocument", params)
            return t.ShowDocumentResult(success=True)

        @client.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(ls: Any, params: t.PublishDiagnosticsParams) -> None:
            self.record("diagnostics", params)

    def record(self, kind: str, params: Any) -> None:
        self.got.append((kind, params))
        self.changed.set()

    def of(self, kind: str) -> list[Any]:
        return [params for name, params in self.got if name == kind]

    async def until(self, test: Callable[[], Any], seconds: float = 30.0) -> Any:
        """Wait (bounded) until test() is truthy; its value."""

        async def wait() -> Any:
            while not (found := test()):
                self.changed.clear()
                try:
                    await asyncio.wait_for(self.changed.wait(), 0.2)
                except TimeoutError:
                    pass
            return found

        return await asyncio.wait_for(wait(), seconds)

    def ended(self) -> bool:
        """A turn's end: its `$/progress` end, else the transcript shown, else the
        showMessage that says it is done."""
        if self.of("create"):  # progress: its end comes last
            return any(stage(p.value) == "end" for p in self.of("progress"))
        if self.of("showDocument"):
            return True
        return any("elelem: done" in p.message for p in self.of("showMessage"))

    def progress(self) -> list[tuple[str, str | None]]:
        """Each `$/progress` as (begin, report or end; its message)."""
        return [(stage(p.value), value_of(p.value, "message")) for p in self.of("progress")]

    # -- the buffers the editor holds --------------------------------------------------
    def uri(self, name: str) -> str:
        return (self.folder / name).as_uri()

    def open(self, name: str, text: str | None = None) -> str:
        uri = self.uri(name)
        text = (self.folder / name).read_text() if text is None else text
        self.buffers[uri] = (1, text)
        item = t.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        self.client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=item))
        return uri

    def type(self, uri: str, text: str) -> None:
        """The user replaces the buffer's text (a full change), a new version."""
        version = self.buffers[uri][0] + 1
        self.buffers[uri] = (version, text)
        self.client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def apply_to_buffers(self, params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
        """As Neovim and Helix do: a versioned edit of a stale buffer is refused; else
        applied to the buffer, and the server hears the change."""
        for change in params.edit.document_changes or []:
            if isinstance(change, t.CreateFile):
                self.buffers[change.uri] = (0, "")  # a new buffer, not on the disk yet
                continue
            if not isinstance(change, t.TextDocumentEdit):
                continue
            uri, version = change.text_document.uri, change.text_document.version
            held = self.buffers.get(uri)
            if held is None:
                held = (0, Path(uri.removeprefix("file://")).read_text())
            if self.refuse_stale and version is not None and version != held[0]:
                return t.ApplyWorkspaceEditResult(applied=False, failure_reason="stale version")
            text = held[1]
            for edit in change.edits:
                text = replace(text, edit)
            if uri in self.buffers:
                self.type(uri, text)
            else:
                self.buffers[uri] = (1, text)
        return t.ApplyWorkspaceEditResult(applied=True)

    # -- requests --------------------------------------------------------------------------
    async def start(self, env: dict[str, str], *args: str) -> None:
        log = self.folder.parent / "server.log"
        script = 'exec "$0" -m elelem_daemon lsp "$@" 2>>"$ELELEM_TEST_LOG"'
        await self.client.start_io(
            "/bin/sh", "-c", script, sys.executable, *args,
            cwd=str(self.folder), env={**env, "ELELEM_TEST_LOG": str(log)},
        )  # fmt: skip

    async def initialize(self, capabilities: dict[str, Any], **more: Any) -> t.InitializeResult:
        """`initialize` with these capabilities (as JSON), read into lsprotocol's types
        first, as pygls's client sends them: a field lsprotocol does not know is left
        out, and the server reads none such."""
        params = {
            "processId": os.getpid(),
            "rootUri": self.folder.as_uri(),
            "capabilities": capabilities,
            **more,
        }
        converter = self.client.protocol._converter  # noqa: SLF001  (the client's own)
        typed = converter.structure(params, t.InitializeParams)
        result = await self.client.initialize_async(typed)
        self.client.initialized(t.InitializedParams())
        return result

    async def initialize_as(self, editor: str) -> t.InitializeResult:
        """`initialize` with an editor's own params (tests/lsp/clients/EDITOR.json), in
        this folder."""
        params = json.loads((INITIALIZE / f"{editor}.json").read_text())
        params.pop("_source")
        params["processId"] = os.getpid()
        folder = {"uri": self.folder.as_uri(), "name": self.folder.name}
        params.update(rootUri=folder["uri"], rootPath=str(self.folder), workspaceFolders=[folder])
        return await self.initialize(params.pop("capabilities"), **params)

    async def actions(
        self, uri: str, line: int, end: int | None = None, diagnostics: list[t.Diagnostic] = ()
    ) -> list[t.CodeAction]:
        span = t.Range(
            start=t.Position(line=line, character=0),
            end=t.Position(line=line if end is None else end, character=0),
        )
        params = t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=uri),
            range=span,
            context=t.CodeActionContext(diagnostics=list(diagnostics)),
        )
        found = await self.client.text_document_code_action_async(params)
        return list(found or [])

    async def execute(self, command: str, *arguments: Any) -> Any:
        params = t.ExecuteCommandParams(command=command, arguments=list(arguments))
        return await self.client.workspace_execute_command_async(params)

    async def run(self, action: t.CodeAction) -> Any:
        assert action.command is not None
        return await self.execute(action.command.command, *(action.command.arguments or []))

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 10)
            self.client.exit(None)
        except Exception:  # noqa: BLE001  (a test that killed it)
            pass
        await self.client.stop()


def value_of(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else getattr(value, key, None)


def stage(value: Any) -> str:
    """A `$/progress` value's kind (the client reads it as plain JSON)."""
    return str(value_of(value, "kind"))


def replace(text: str, edit: t.TextEdit) -> str:
    """Apply one TextEdit (positions in UTF-16 code units, as the server sends)."""
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text) or [""]  # LSP's lines

    def offset(position: t.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        before = sum(len(line) for line in lines[: position.line])
        line = lines[position.line]
        units, index = 0, 0
        while index < len(line) and units < position.character:
            units += 2 if ord(line[index]) > 0xFFFF else 1
            index += 1
        return before + index

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
