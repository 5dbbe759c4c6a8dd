"""LspFiles: the session's files through the editor, as LSP lets a server reach them.

An `EditorFiles` (edits/filesystem.py), the seam every face's editor reads go through:
- reads see the open documents: the text the client pushed (`didOpen`/`didChange`,
  kept by pygls's workspace), with its version; a file the editor does not have open
  is read from the disk;
- a change by `write` or `edit` goes to the client as `workspace/applyEdit` with
  `documentChanges`: a `TextDocumentEdit` whose version is the one the agent read
  (null for a file the editor does not have open: it loads it from the disk), cut to
  the lines that changed, so the editor's own undo takes it back. A new file is a
  `CreateFile` resource operation when the client declares `resourceOperations`
  `create`; else, and for a client without `applyEdit`, the change lands on the disk
  as in every face (conflict-checked, under the usual permissions);
- a document whose version moved since the agent read it is a conflict before it is
  sent; an edit the client refuses (`applied: false`: Helix and Neovim refuse a stale
  version) is a conflict the model reads; a client that does not answer within
  EDITOR_WAIT seconds leaves the change "not applied". Never a silent write.

Once applied, the text is what the model reads until the client's own `didChange`
(or `didOpen`) catches up: `pending`, dropped at the document's next change.
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path

from ...base.config import number
from ...edits.changes import Change, Outcome
from ...edits.filesystem import EditorFiles, FileState, LocalFiles

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer
    from pygls.workspace import TextDocument

log = logging.getLogger(__name__)
EDITOR_WAIT = number("ELELEM_EDITOR_TIMEOUT", 30)  # seconds an applyEdit may take
BREAKS = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
CAUGHT_UP = 2.0  # seconds an applied edit waits for the client's didChange


class LspFiles(EditorFiles):
    def __init__(self, server: LanguageServer) -> None:
        super().__init__(self._read, None)
        self.server = server
        self.pending: dict[Path, str] = {}  # applied, not yet back in a didChange
        self.changed = asyncio.Event()  # set at every didOpen/didChange (server.py)
        self.edited = False  # a change reached the editor in this turn
        self.disk = LocalFiles()

    # -- the client's documents ------------------------------------------------------
    def document(self, path: Path) -> TextDocument | None:
        """The open document of `path`, whichever spelling of its URI the client used."""
        try:
            documents = self.server.workspace.text_documents
        except RuntimeError:  # not initialized
            return None
        direct = documents.get(from_fs_path(str(path)) or "")
        if direct is not None:
            return direct
        for uri, document in list(documents.items()):
            local = to_fs_path(uri)
            if local is not None and Path(local) == path:
                return document
        return None

    def touched(self, uri: str) -> None:
        """The client changed or opened a document: what it holds is the truth again."""
        local = to_fs_path(uri)
        if local is not None:
            self.pending.pop(Path(local), None)
        self.changed.set()
        self.changed = asyncio.Event()

    async def _read(self, path: Path) -> FileState | None:
        if path in self.pending:
            return FileState.of(self.pending[path], None, editor=True)
        document = self.document(path)
        if document is None:
            return None
        return FileState.of(document.source, document.version, editor=True)

    # -- changes -----------------------------------------------------------------------
    def _capabilities(self) -> tuple[bool, list[str]]:
        workspace = self.server.client_capabilities.workspace
        if workspace is None or not workspace.apply_edit:
            return False, []
        edit = workspace.workspace_edit
        kinds = edit.resource_operations or [] if edit else []
        operations = [str(getattr(op, "value", op)) for op in kinds]
        return True, operations

    async def write_text(self, path: Path, text: str) -> int:
        """A plain write (a plugin's): a change from what the editor or disk holds now."""
        from ...edits.hunks import split

        base = await self.snapshot(path, errors="replace")
        hunks = await asyncio.to_thread(split, base.text, text)
        outcome = await self.propose(Change(path, str(path), base, text, hunks))
        if not outcome.landed:
            raise OSError(f"{path}: not written: {outcome.reason or outcome.outcome}")
        return len(text.encode("utf-8"))

    async def propose(self, change: Change, review: bool = False) -> Outcome:
        if review:
            raise ValueError("an LSP client does not review changes")
        applies, operations = self._capabilities()
        document = self.document(change.path)
        creates = change.old is None and "create" in operations
        if not applies or (change.old is None and not creates):
            return await self.disk.propose(change)  # the disk's own text, conflict-checked
        if document is not None and change.path not in self.pending:
            if change.base.version != document.version:
                return Outcome("conflict")
        version = document.version if document is not None else None
        uri = from_fs_path(str(change.path))
        changes: list[Any] = []
        if creates:
            changes.append(lsp.CreateFile(uri=uri, options=lsp.CreateFileOptions(overwrite=False)))
            version = None
        encoding = self.server.workspace.position_encoding
        ranged = edit_of(change.old or "", change.new, str(encoding or "utf-16"))
        identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        changes.append(lsp.TextDocumentEdit(text_document=identifier, edits=[ranged]))
        params = lsp.ApplyWorkspaceEditParams(
            edit=lsp.WorkspaceEdit(document_changes=changes), label="elelem"
        )
        waiting = self.changed
        try:
            async with asyncio.timeout(EDITOR_WAIT or None):
                answer = await self.server.workspace_apply_edit_async(params)
        except TimeoutError:
            return Outcome(
                "failed", reason=f"not applied: the editor did not answer within {EDITOR_WAIT:g} s"
            )
        except Exception as exc:  # an error response, or the client went away
            return Outcome("failed", reason=f"not applied: the editor could not take it: {exc}")
        if not getattr(answer, "applied", False):
            log.info("lsp: edit refused: %s", getattr(answer, "failure_reason", None))
            return Outcome("conflict")  # stale, or refused: the model reads it again
        self.edited = True
        if waiting.is_set():  # the client's didChange came before its answer
            return Outcome("accepted", change.ids(), change.new)
        self.pending[change.path] = change.new
        if document is not None:  # its didChange is on the way: wait for it, briefly
            try:
                async with asyncio.timeout(CAUGHT_UP):
                    await waiting.wait()
            except TimeoutError:
                pass
        return Outcome("accepted", change.ids(), change.new)


def units(text: str, encoding: str) -> int:
    """The length of `text` in the position encoding's units."""
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def lines_of(text: str) -> list[str]:
    """The lines as LSP counts them (ended by \\n, \\r\\n or \\r only), their ends kept."""
    return BREAKS.findall(text)


def edit_of(old: str, new: str, encoding: str = "utf-16") -> lsp.TextEdit:
    """One TextEdit turning `old` into `new`: the lines between their common first and
    last lines replaced, so the cursor and the undo step stay where the change is."""
    before, after = lines_of(old), lines_of(new)
    top = 0
    while top < min(len(before), len(after)) and before[top] == after[top]:
        top += 1
    tail = 0
    while (
        tail < min(len(before), len(after)) - top
        and before[len(before) - 1 - tail] == after[len(after) - 1 - tail]
    ):
        tail += 1
    end_line = len(before) - tail
    if tail == 0 and before and not before[-1].endswith(("\n", "\r")):  # no final newline
        end = lsp.Position(line=len(before) - 1, character=units(before[-1], encoding))
    else:
        end = lsp.Position(line=end_line, character=0)
    text = "".join(after[top : len(after) - tail])
    return lsp.TextEdit(
        range=lsp.Range(start=lsp.Position(line=top, character=0), end=end), new_text=text
    )
