"""LspFace: the one session a language server holds, and its turns in the background.

The session opens at the first job, in the workspace's root folder (the editor's), with
the face's Output and Input (window.py) and the editor's files (documents.py), stored as it
goes like every face's (`elelem sessions`, `elelem chat --resume`). A job (a code action,
`elelem.ask`) answers at once: its turn runs as the session's one task (control/live.py:
a second one while it runs is refused, busy), reported through `$/progress` when the
client declares `window.workDoneProgress`, else said in `window/showMessage` when it
starts and ends. Cancelling the progress, or `elelem.cancel`, cancels the turn: the core
kills its processes.

Every URI a client names is hostile: only `file:` URIs inside the folder are worked on
(`inside`).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path

from ...base.errors import InvalidParams, SessionBusy
from ...control.live import Live
from . import actions, answers, progress, review
from .documents import LspFiles
from .window import LspInput, LspOutput, ask_held, ask_trust

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from ...agent import TurnResult
    from ...store.store import Store

log = logging.getLogger(__name__)
READ_CAP = 4 << 20  # bytes of a file not open in the editor read for an action's lines


class NotHere(InvalidParams):
    """A job on something this server does not work on (kind: invalid_params)."""


class LspFace:
    def __init__(
        self,
        server: LanguageServer,
        store: Store,
        provider: str | None,
        model: str | None,
        rules: list[tuple[str, str]],
    ) -> None:
        self.server = server
        self.store = store
        self.provider, self.model, self.rules = provider, model, rules
        self.live: Live | None = None
        self.files = LspFiles(server)
        self.output = LspOutput(server)
        self.input = LspInput(server, self.output)
        self.running: asyncio.Task[None] | None = None
        self.token: str | None = None
        self.trust_asked = False
        self.reviewed: set[Path] = set()  # the files the last review published on
        self.listening = False
        self.ending: list[asyncio.Future[None]] = []  # the signalled end, kept alive

    # -- the folder and its documents --------------------------------------------------
    @property
    def root(self) -> Path:
        try:
            root = self.server.workspace.root_path
        except RuntimeError:
            root = None
        return Path(root).resolve() if root else Path.cwd().resolve()

    def inside(self, uri: Any) -> Path:
        """The file a URI names, if it is a `file:` URI inside the folder; else NotHere."""
        if not isinstance(uri, str) or len(uri) > 4096:
            raise NotHere("uri must be a string of at most 4096 characters")
        local = to_fs_path(uri)
        if local is None or not local.startswith("/"):
            raise NotHere(f"not a file: URI: {uri[:200]}", errors=["uri: only file: URIs"])
        try:
            path = Path(local).resolve()
            if path == self.root or len(local) > 4096:
                raise ValueError("the folder itself")
            path.relative_to(self.root)
        except (ValueError, OSError, RuntimeError):
            raise NotHere(
                f"outside the folder {self.root}: {uri[:200]}", errors=["uri: outside the folder"]
            ) from None
        return path

    def lines(self, path: Path) -> list[str]:
        """The document's lines: the editor's text when open, else the disk's (bounded)."""
        document = self.files.document(path)
        if document is not None:
            return list(document.lines)
        try:
            with path.open("rb") as file:
                data = file.read(READ_CAP)
        except OSError:
            return []
        return data.decode("utf-8", "replace").splitlines(keepends=True)

    # -- the session -----------------------------------------------------------------------
    def session(self) -> Live:
        if self.live is None:
            from ...base.config import choose_provider
            from ...plugins import core_registry
            from ...session import start

            provider, model = choose_provider(None, None, self.provider, self.model)
            session = start(
                core_registry(),
                provider,
                model,
                self.root,
                input=self.input,
                output=self.output,
                project=None,  # the trusted-folders file decides; untrusted until trusted
                store=self.store,
                face="editor",
                rules=self.rules,
            )
            session.files = self.files
            self.live = Live(session)
        return self.live

    def modes(self) -> list[tuple[str, str]]:
        if self.live is None:
            return []
        return [(m.id, m.description or "") for m in self.live.session.modes.available()]

    def skills(self) -> list[tuple[str, str]]:
        found = getattr(self.live.session, "skills", None) if self.live else None
        listed = getattr(found, "skills", None)
        if not isinstance(listed, dict):
            return []
        return [(name, getattr(skill, "description", "")) for name, skill in listed.items()]

    def idle(self) -> Live:
        """The session, when nothing runs in it (else SessionBusy, as in every face)."""
        live = self.session()
        live.ensure_idle()
        if self.running is not None and not self.running.done():
            raise SessionBusy(f"session {live.id} is busy: a turn is running", sessionId=live.id)
        return live

    # -- jobs ---------------------------------------------------------------------------
    def run(self, job: actions.Job) -> dict[str, Any]:
        """Start the job's turn in the background; answer at once. Only `elelem.ask` may
        name no document (no uri)."""
        path = None if job.kind == "ask" and not job.uri else self.inside(job.uri)
        live = self.idle()
        before = live.session.modes.current.id
        if job.kind == "mode":
            live.session.modes.set(job.name)  # an unknown mode: InvalidParams
        if path is None:
            text, title = job.text, f"ask: {actions.quote([job.text], 0, 0)[3:60]}"
        else:
            shown = str(path.relative_to(self.root))
            text = actions.prompt(job, shown, self.lines(path))
            title = f"{job.kind}: {shown}:{job.start + 1}"
        reviews = live.session.modes.current.id == "review"
        if reviews:
            text += review.ASK
        self.running = asyncio.ensure_future(self._turn(live, text, title, reviews, before))
        return {"started": True, "sessionId": live.id}

    def command(self, line: str, title: str) -> dict[str, Any]:
        """A slash command (`/undo`, `/rewind N`) as the session's task, in the background."""
        live = self.idle()
        self.running = asyncio.ensure_future(self._command(live, line, title))
        return {"started": True, "sessionId": live.id}

    async def _begin(self, title: str) -> None:
        self.token = await progress.begin(self.server, title)
        self.output.begin(self.token, self.root)
        if self.token is None:
            self.output.show(f"elelem: working: {title}")

    async def _end(self, title: str, said: str, edited: bool) -> None:
        """The reply into the transcript, the transcript shown (or its path said), then
        the progress ended: a client that waits for the end has everything."""
        live = self.live
        path = answers.transcript_path(live.id if live else "session")
        try:
            await answers.append(path, answers.section(title, self.output.calls, said))
        except OSError as exc:
            log.warning("lsp: transcript not written: %s", exc)
        if not await progress.show(self.server, path, edited):
            self.output.show(f"elelem: done: {title}. The reply: {path}")
        token, self.token = self.token, None
        if token is not None:
            progress.end(self.server, token, f"done: {title}")

    async def _turn(
        self, live: Live, text: str, title: str, reviews: bool = False, mode: str = ""
    ) -> None:
        await self._begin(title)
        self.files.edited = False
        result: TurnResult | None = None
        try:
            await self.trust(live)
            result = await live.turn(text)
        except Exception as exc:  # a refused attachment, a provider that failed to start
            log.warning("lsp: turn failed: %s", exc)
            self.output.say(str(exc), "error")
        finally:
            stop = result.stop_reason if result is not None else "error"
            said = self.output.text() + ("\n\n[cancelled]" if stop == "cancelled" else "")
            if mode and live.session.modes.current.id != mode:
                live.session.modes.set(mode)  # a mode's action is for its one turn
            if reviews and stop == "end_turn":
                self.publish(review.findings(said, self.root))
            await self._end(title if stop == "end_turn" else f"{title} ({stop})", said,
                            self.files.edited)  # fmt: skip

    async def _command(self, live: Live, line: str, title: str) -> None:
        await self._begin(title)
        try:
            result = await live.command(line)
            said = result.output
        except asyncio.CancelledError:
            said = "[cancelled]"
        except Exception as exc:
            said = f"Error: {exc}"
        await self._end(title, said, False)

    async def trust(self, live: Live) -> None:
        """At the first turn: the user's own held files, then a folder with something to
        trust (window.py)."""
        if not self.trust_asked:
            self.trust_asked = True
            await ask_held(live, self.input, self.output)
            await ask_trust(live.session, self.input, self.output)

    def publish(self, found: dict[Path, list[tuple[int, str]]]) -> None:
        """A review's findings as diagnostics; the last review's files without findings
        now are cleared."""
        for path in self.reviewed - set(found):
            self.server.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=from_fs_path(str(path)), diagnostics=[])
            )
        for path, lines in found.items():
            document = self.files.document(path)
            self.server.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(
                    uri=document.uri if document is not None else from_fs_path(str(path)),
                    diagnostics=review.diagnostics(lines),
                    version=document.version if document is not None else None,
                )
            )
        self.reviewed = set(found)

    def cancel(self) -> bool:
        """Cancel the running turn or command, if any."""
        running = self.running
        if running is None or running.done():
            return False
        if self.live is not None and self.live.busy:
            self.live.cancel()  # the turn ends, answered as cancelled; its tools killed
        else:
            running.cancel()  # still starting (its progress token)
        return True

    def cancelled(self, token: Any) -> None:
        """`window/workDoneProgress/cancel`: the turn of that token stops."""
        if token is not None and token == self.token:
            self.cancel()

    async def close(self) -> None:
        if self.live is not None:
            await self.live.close(0.3)

    def listen(self) -> None:
        """On SIGTERM or SIGHUP (processes/signals.py): the running turn is cancelled,
        its tools killed, the session released, then the process exits with 128 + N."""
        from ...processes.signals import leave, on_signals

        if self.listening:
            return
        self.listening = True

        async def end(code: int) -> None:
            try:
                await self.close()
            finally:
                leave(code)

        on_signals(lambda code: self.ending.append(asyncio.ensure_future(end(code))))
