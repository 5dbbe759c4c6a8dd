"""The language server: pygls's `LanguageServer` as its authors ship it, one feature per
handler (the shape of pygls's own examples/servers), each handing its work to the
face (face.py).

- `textDocument/codeAction`: the actions on a selection, a diagnostic or a marked
  comment (actions.py), each with its command already in it;
- `workspace/executeCommand`: `elelem.run` (an action's job), `elelem.ask` (free
  text), `elelem.cancel`, `elelem.undo`, `elelem.rewind`: each answers at once, the turn
  runs in the background;
- `window/workDoneProgress/cancel`: the turn of that progress stops;
- `didOpen`/`didChange` (pygls's workspace keeps the text): the face's files hear that
  the editor's text moved on.

An ElelemError a handler raises is answered as a JSON-RPC error whose `data.kind` names
it (jsonrpc/errors.py, the code table every face shares); pygls answers a command it
does not know with invalid params.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from ... import __version__
from ...base.errors import ElelemError, InvalidParams
from ...jsonrpc.errors import rpc_error
from . import actions

if TYPE_CHECKING:
    from .face import LspFace

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
COMMANDS = ("elelem.run", "elelem.ask", "elelem.cancel", "elelem.undo", "elelem.rewind")
ASK_CAP = 20_000  # characters of an `elelem.ask` text
DIAGNOSTICS_READ = 50  # diagnostics of a request looked at


def answered(handler: F) -> F:
    """The face's errors as JSON-RPC errors with `data.kind`."""

    @functools.wraps(handler)  # pygls reads the handler's own signature (its `ls`)
    def wrapped(*args: Any) -> Any:
        try:
            return handler(*args)
        except ElelemError as exc:
            error = rpc_error(exc)
            raise JsonRpcException(code=error.code, message=str(error), data=error.data) from None
        except actions.BadJob as exc:
            raise JsonRpcException(
                code=-32602, message=str(exc), data={"kind": "invalid_params"}
            ) from None

    return wrapped  # type: ignore[return-value]


def build(make_face: Callable[[LanguageServer], LspFace]) -> LanguageServer:
    server = LanguageServer("elelem", __version__)
    face = make_face(server)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: LanguageServer, params: lsp.InitializeParams) -> None:
        face.listen()  # SIGTERM and SIGHUP end the server as every face ends

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        face.files.touched(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
        face.files.touched(params.text_document.uri)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Empty],
            resolve_provider=False,
            work_done_progress=True,
        ),
    )
    def code_action(ls: LanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return code_actions(face, params)

    @server.command("elelem.run")
    @answered
    def run(ls: LanguageServer, *arguments: Any) -> Any:
        return face.run(actions.job_of(arguments[0] if arguments else None))

    @server.command("elelem.ask")
    @answered
    def ask(ls: LanguageServer, *arguments: Any) -> Any:
        """`elelem.ask TEXT [URI [LINE]]`: a turn on free text, about a place if given."""
        text = arguments[0] if arguments else None
        if not isinstance(text, str) or not text.strip() or len(text) > ASK_CAP:
            raise InvalidParams(f"elelem.ask takes a text of 1 to {ASK_CAP} characters")
        uri = arguments[1] if len(arguments) > 1 else ""  # about no document
        line = arguments[2] if len(arguments) > 2 else 0
        start, end = actions.lines_of(line, line)
        return face.run(actions.Job("ask", uri, start, end, text))

    @server.command("elelem.cancel")
    def cancel(ls: LanguageServer, *arguments: Any) -> Any:
        return {"cancelled": face.cancel()}

    @server.command("elelem.undo")
    @answered
    def undo(ls: LanguageServer, *arguments: Any) -> Any:
        return face.command("/undo", "undo")

    @server.command("elelem.rewind")
    @answered
    def rewind(ls: LanguageServer, *arguments: Any) -> Any:
        """`elelem.rewind N`: back to before turn N (`/rewind N`)."""
        number = arguments[0] if arguments else None
        if isinstance(number, bool) or not isinstance(number, int) or not 0 < number < 1 << 31:
            raise InvalidParams("elelem.rewind takes a turn's number")
        return face.command(f"/rewind {number}", f"rewind to turn {number}")

    @server.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: LanguageServer, params: lsp.WorkDoneProgressCancelParams) -> None:
        face.cancelled(params.token)

    @server.feature(lsp.SHUTDOWN)
    async def shutdown(ls: LanguageServer, *_: Any) -> None:
        await face.close()

    server.face = face  # type: ignore[attr-defined]  # for serve() and tests
    return server


def code_actions(face: LspFace, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """The actions offered on a range: none for a document this server does not work on."""
    uri = params.text_document.uri
    try:
        path = face.inside(uri)
        start, end = actions.lines_of(params.range.start.line, params.range.end.line)
    except (ElelemError, actions.BadJob):
        return []
    try:
        face.session()  # the folder's modes and skills are offered from the first request
    except Exception as exc:  # an unknown provider, ...: said when an action runs
        log.warning("lsp: no session yet: %s", exc)
    diagnostics = [
        (d.range.start.line, d.range.end.line, d.message)
        for d in (params.context.diagnostics or [])[:DIAGNOSTICS_READ]
        if isinstance(d.message, str)
    ]
    try:
        offered = actions.offered(
            uri, face.lines(path), start, end, diagnostics, face.modes(), face.skills()
        )
    except actions.BadJob:
        return []
    found = []
    for title, kind, job in offered:
        command = lsp.Command(title=title, command="elelem.run", arguments=[job.to_wire()])
        found.append(
            lsp.CodeAction(
                title=title,
                kind=lsp.CodeActionKind.QuickFix if kind == "quickfix" else None,
                command=command,
            )
        )
    return found
