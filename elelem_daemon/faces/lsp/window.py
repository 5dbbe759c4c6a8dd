"""The LSP face's Output and Input: the core calls them, the editor sees LSP.

`LspOutput` keeps a turn's reply for its Markdown transcript (answers.py) and says
each tool call as the other faces title it (`tool.tool_title`: `Read a.py`,
`` `pytest` ``): a `$/progress` report when the turn has a progress token, else a
`window/logMessage`. `LspInput` asks with `window/showMessageRequest` (the choices as
its action items) when the client declares it (`window.showMessage`); otherwise no
question can be asked: it answers None, so only the rules set ahead decide (the
permission policy refuses, and the model reads `NO_ANSWER`), and the user is told
once, in a `window/showMessage`, how to set rules. A question only the user may
answer (`user_only`) is a showMessageRequest too: no LSP client answers one by
itself.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ...base.config import number
from ...io import CannotAsk, NullInput, NullOutput
from ...result import Result
from ...tool import tool_title

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)
ASK_WAIT = number("ELELEM_REVIEW_TIMEOUT", 1800)  # seconds a person gets to answer
REPLY_CAP = 1 << 20  # characters of one turn's reply kept for the transcript
MESSAGE_CAP = 4000  # characters of a question shown in a message
TRUST_OPTIONS = ["no", "yes, this session", "yes, and remember"]  # "no" first
TRUST_YES = {"yes, this session": False, "yes, and remember": True}
TRUST_HOW = "run `elelem trust {}` in a terminal, then restart the server; or add it to {{}}"
NO_QUESTIONS = "this LSP client declares no window/showMessageRequest"
UNASKED = (
    "elelem could not ask you: {prompt} Refused. This editor cannot show questions: set "
    "rules ahead (`--allow`/`--deny` in the server's arguments, or .agents/permissions; "
    "docs/lsp.md)."
)


class LspOutput(NullOutput):
    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.token: str | None = None  # the running turn's $/progress token
        self.cwd = Path.cwd()
        self.parts: list[str] = []
        self.size = 0
        self.calls: list[str] = []  # the titles of this turn's tool calls
        self.at: dict[str, int] = {}  # a call's id → its line in `calls`

    def begin(self, token: str | None, cwd: Path) -> None:
        self.token, self.cwd, self.parts, self.size, self.calls = token, cwd, [], 0, []
        self.at = {}

    def text(self) -> str:
        return "".join(self.parts)

    def _keep(self, text: str) -> None:
        if self.size < REPLY_CAP:
            kept = text[: REPLY_CAP - self.size]
            self.parts.append(kept)
            self.size += len(kept)

    def status(self, message: str) -> None:
        """One line of what happens: a progress report, else a log message."""
        if self.token is not None:
            report = lsp.WorkDoneProgressReport(message=message)
            self.server.work_done_progress.report(self.token, report)
        else:
            self.log(message)

    def log(self, message: str) -> None:
        self.server.window_log_message(
            lsp.LogMessageParams(type=lsp.MessageType.Info, message=f"elelem: {message}")
        )

    def show(self, message: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        self.server.window_show_message(lsp.ShowMessageParams(type=kind, message=message))

    def say(self, text: str, kind: str = "plain") -> None:
        if text and text.strip():
            self._keep(f"\n\n{'Error: ' if kind == 'error' else ''}{text}\n\n")
            if kind == "error":
                self.log(text[:MESSAGE_CAP])

    def reply(self, text: str) -> None:
        self._keep(text)

    def doing(self, call: dict[str, Any]) -> None:
        arguments = call.get("arguments")
        title = tool_title(
            str(call.get("name", "")), arguments if isinstance(arguments, dict) else {}, self.cwd
        )
        self.at[str(call.get("id"))] = len(self.calls)
        self.calls.append(title)
        self.status(title)

    def result(self, call: dict[str, Any], result: Result) -> None:
        """A failed call (an error, or an exit status outside the tool's own: `list` of a
        missing path) is said in the progress and marked ✗ in the transcript's list."""
        if result.failed:
            why = result.why_failed.splitlines()[0][:200] if result.why_failed else "failed"
            at = self.at.get(str(call.get("id")))
            title = self.calls[at] if at is not None else str(call.get("name"))
            if at is not None:
                self.calls[at] = f"{title} ✗ {why}"
            self.status(f"{title}: ✗ {why}")


class LspInput(NullInput):
    """No lines to read (instructions come as commands); questions go to the editor."""

    def __init__(self, server: LanguageServer, output: LspOutput) -> None:
        super().__init__()
        self.server = server
        self.output = output
        self.told = False  # the user heard once that questions cannot be asked

    @property
    def asks(self) -> bool:
        window = self.server.client_capabilities.window
        return window is not None and window.show_message is not None

    async def readline(self, prompt: str = "> ") -> str | None:
        return None

    async def ask(
        self,
        prompt: str,
        options: list[str] | None = None,
        kind: str = "question",
        user_only: bool = False,
        **_: Any,
    ) -> str | None:
        if not self.asks or not options:
            if not self.told:
                self.told = True
                self.output.show(
                    UNASKED.format(prompt=prompt[:MESSAGE_CAP]), lsp.MessageType.Warning
                )
            if user_only:
                raise CannotAsk(NO_QUESTIONS)
            return None
        shown = prompt if len(prompt) <= MESSAGE_CAP else prompt[: MESSAGE_CAP - 1] + "…"
        params = lsp.ShowMessageRequestParams(
            type=lsp.MessageType.Warning if kind == "permission" else lsp.MessageType.Info,
            message=f"elelem: {shown}",
            actions=[lsp.MessageActionItem(title=option) for option in options],
        )
        try:
            async with asyncio.timeout(ASK_WAIT or None):
                answer = await self.server.window_show_message_request_async(params)
        except TimeoutError:
            return None
        except Exception as exc:  # an error response, or the client went away
            log.warning("lsp: showMessageRequest failed: %s", exc)
            return None
        title = getattr(answer, "title", None)
        return title if isinstance(title, str) and title in options else None


async def ask_trust(session: Any, input: LspInput, output: LspOutput) -> None:
    """A folder with something to trust (safety/trust.py): asked where the client can
    show questions (a yes loads it now), else said once, with how to trust it."""
    from ...base.errors import TrustNotKept
    from ...safety.trust import grant, question

    trust = session.trust
    if trust is None or trust.trusted or not trust.skipped:
        return
    if not input.asks:
        notice = trust.notice(TRUST_HOW.format(trust.folder))
        if notice:
            output.show(notice, lsp.MessageType.Warning)
        return
    answer = await input.ask(
        f"{question(trust.folder)} Trusting it loads: {'; '.join(trust.loads)}",
        TRUST_OPTIONS,
        kind="trust",
    )
    if answer in TRUST_YES:
        try:
            grant(session, trust, keep=TRUST_YES[answer])
        except TrustNotKept as exc:
            output.show(f"elelem: {exc}", lsp.MessageType.Error)


async def ask_held(live: Any, input: LspInput, output: LspOutput) -> None:
    """The user's own files held as new or changed since approved (safety/vetted.py):
    asked where the client can show questions (`hold` first: an answer by the first
    choice loads nothing; `load` runs `/trust files`, the one home of that word), else
    said once, with how to load them."""
    from ...safety import vetted

    shown = list(live.session.held)
    if not shown:
        return
    if input.asks:
        answer = await input.ask(vetted.question(shown), list(vetted.OPTIONS), kind="trust")
        if answer == vetted.LOAD:
            await live.command("/trust files")
        return
    how = f"run `{vetted.APPROVE}` in a terminal, then restart the server"
    output.show(f"elelem: {vetted.notice_line(shown, how)}", lsp.MessageType.Warning)
