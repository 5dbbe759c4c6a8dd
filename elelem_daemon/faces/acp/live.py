"""AcpLive: one core Session open in the ACP face: its prompts (a turn or a slash
command), the history it replays, how full the model's context is, and what the client
can pick (commands, provider and model). It decides nothing: the agent, its tools,
commands, permission policy, the busy rule and `/exit` are the core's; this only
translates (editor.py holds the Output and Input that feed the client).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ...agent import CANCELLED
from ...control.live import Live
from ...conversation import text_of
from ...safety.trust import TYPED_HOW
from . import options, title, updates
from .editor import AcpInput, AcpOutput
from .prompt import command_line, prompt_parts

if TYPE_CHECKING:
    from ...agent import TurnResult
    from ...session import Session

log = logging.getLogger(__name__)
EXIT_TEXT = "To end this session, close it in the editor."
# The form's choices (`elicitation/create`), "no" first: a form filled in with its first
# value trusts nothing. The yeses: kept in the trusted-folders file, or not.
TRUST_OPTIONS = ["no", "yes, this session", "yes, and remember"]
TRUST_YES = {"yes, this session": False, "yes, and remember": True}


EMPTY = "(an empty message: nothing to do)"
COMPACTED = "\n\n*(context compacted here: the model reads a summary of what came before)*\n\n"


def apart(text: str) -> str:
    """A stored `<text so far>[cancelled]` shown with the mark on a line of its own."""
    if (
        text.endswith(CANCELLED)
        and text != CANCELLED
        and not text[: -len(CANCELLED)].endswith("\n")
    ):
        return f"{text[: -len(CANCELLED)]}\n\n{CANCELLED}"
    return text


class AcpLive(Live):
    def __init__(
        self, session: Session, output: AcpOutput, ask_trust: bool = False, booleans: bool = False
    ) -> None:
        super().__init__(session)
        self.booleans = booleans  # the client takes boolean config options
        self.titled = title.title(session)  # the title the client was last told
        self.served = session.answering  # the model that answers, as the client was last told
        self.output = output
        self.window: asyncio.Future[int | None] | None = None
        self.advertised: list[dict[str, Any]] | None = None  # the last commands sent
        self.watched: Any = None  # the MCP manager listened to
        self._pending = False
        self.ask_trust = ask_trust  # an untrusted folder with plugins or rules: ask once
        self.ask_held = bool(session.held)  # the user's own files held: ask once
        self.roots: list[str] = []  # the client's additional workspace roots: kept, listed
        self.replaying = asyncio.Lock()  # two loads at once: one replay after the other
        self.look_up_window()
        session.modes.listeners.append(self.mode_changed)
        session.plan.listeners.append(self.planned)

    def update(self, payload: dict[str, Any]) -> None:
        self.output.update(payload)

    # -- prompts ----------------------------------------------------------------
    async def prompt(self, blocks: Any) -> dict[str, Any]:
        """Run one prompt: a slash command or a turn. Answers with the stop reason; an
        empty prompt (no blocks, or only blank text) runs nothing, and says so in one
        short chunk: a client that waits for a reply before it takes the next message
        (codecompanion) then goes on."""
        if self.busy and self.session.steerable:
            return await self.steer(blocks)  # an extension: docs/acp.md, `_meta`
        self.ensure_idle()  # before the blocks are read: a busy session says so first
        text, attachments = prompt_parts(blocks, self.session.cwd)
        if not text.strip() and not attachments:
            self.output.begin()
            self.output.say(EMPTY)
            return {"stopReason": "end_turn"}
        line = None if attachments else command_line(text)
        self.output.begin()
        before = _cancels()
        try:
            if self.ask_held and (line or "").split(" ")[0] != "/trust":
                await self.confirm_held()
            if self.ask_trust and (line or "").split(" ")[0] != "/trust":
                await self.trust()  # a first prompt of `/trust` needs no telling
            return await (self.run_command(line) if line else self.run_turn(text, attachments))
        except asyncio.CancelledError:
            _take_back(before)  # answered: a `$/cancel_request` of it ends here
            self.output.interrupted()
            return {"stopReason": "cancelled"}
        finally:
            self.retitle()
            self.served_changed()

    def served_changed(self) -> None:
        """`config_option_update` when the model that answers is newly known or changed
        (a local server serves its own, whatever was asked for): the model option shows
        its name (options.py)."""
        if self.session.answering != self.served:
            self.served = self.session.answering
            self.update(
                {"sessionUpdate": "config_option_update", "configOptions": self.config_options()}
            )

    def retitle(self) -> None:
        """`session_info_update` when the title changed (title.py): the first prompt
        gives it; `/compact`, `/undo` and `/rewind` change it."""
        now = title.title(self.session)
        if now != self.titled:
            self.titled = now
            self.update(title.update(now))

    async def steer(self, blocks: Any) -> dict[str, Any]:
        """A prompt sent while a turn runs is a steer (steering.py): queued for that
        turn's next request, and answered when that turn ends, with its stop reason and
        `_meta.elelem.steer`: `sent` (the model read it) or `dropped` (the turn ended
        first). Its `$/cancel_request` answers at once, `cancelled`: `withdrawn` when the
        turn had not taken it (steering.py: never sent nor kept), else `sent`. Text
        only: a slash command, or context blocks, are refused (busy)."""
        text, attachments = prompt_parts(blocks, self.session.cwd)
        if attachments or command_line(text) or not text.strip():
            self.ensure_idle()  # refused as any prompt to a busy session
        task, before = self.task, _cancels()
        steer = self.session.steer(text)
        try:
            if task is not None:
                await asyncio.wait([task])  # this request's cancel leaves the turn alone
        except asyncio.CancelledError:  # `$/cancel_request` for this prompt
            _take_back(before)  # answered, not raised: the cancel ends here
            withdrawn = self.session.agent.steering.withdraw(steer)
            said = "withdrawn" if withdrawn else "sent" if steer.sent else "dropped"
            return {"stopReason": "cancelled", "_meta": {"elelem": {"steer": said}}}
        ended = task is not None and not task.cancelled() and task.exception() is None
        stop = task.result().stop_reason if task is not None and ended else "cancelled"
        stop = "end_turn" if stop == "error" else stop
        return {
            "stopReason": stop,
            "_meta": {"elelem": {"steer": "sent" if steer.sent else "dropped"}},
        }

    async def trust(self) -> None:
        """At the first prompt in a folder with something to trust: a client that
        takes forms (`elicitation/create`) is asked once, with what the folder would
        load; any other is told once, in the chat, what was skipped and how to trust
        it (`/trust`). Never a `session/request_permission`: a client that approves
        every permission (avante's default, `acpx --approve-all`) would answer it for
        the user (docs/acp.md, "Trust"). A yes loads them before the prompt runs."""
        self.ask_trust = False
        if isinstance(self.session.input, AcpInput) and self.session.input.elicits:
            task = self._start(self._ask_trust)
            try:
                await task
            finally:
                self._end()
            return
        trust = self.session.trust
        notice = trust.notice(TYPED_HOW) if trust is not None else None
        if trust is not None and notice:
            self.output.paragraph(f"{notice}. Trusting it loads:\n{trust.listing()}")

    async def confirm_held(self) -> None:
        """At the first prompt, the user's own files held as new or changed
        (vetted.py): a form for a client that takes them (`hold` first: a form sent
        back with its first value loads nothing), else one paragraph saying how to
        load them (`/trust files`). Never a `session/request_permission`, which an
        approve-all client answers for the user."""
        from ...safety import vetted

        self.ask_held = False
        shown = list(self.session.held)
        if not shown:
            return
        if isinstance(self.session.input, AcpInput) and self.session.input.elicits:
            task = self._start(lambda: self._ask_held(shown))
            try:
                if await task:
                    return
            finally:
                self._end()
        how = f"type /trust files to load them, or run `{vetted.APPROVE}` in a terminal"
        self.output.paragraph(vetted.notice_line(shown, how))

    async def _ask_held(self, shown: list[Any]) -> bool:
        from ...io import ask
        from ...safety import vetted

        answer = await ask(
            self.session.input, vetted.question(shown), list(vetted.OPTIONS), kind="trust"
        )
        if answer != vetted.LOAD:
            return False
        vetted.approve(shown)
        self.session.held = vetted.held()
        self.session.reload()
        self.trusted()  # its commands, modes and servers: the client hears of them
        return True

    async def _ask_trust(self) -> None:
        from ...base.errors import TrustNotKept
        from ...io import ask
        from ...safety.trust import grant, question

        session, trust = self.session, self.session.trust
        if trust is None:
            return
        answer = await ask(
            session.input,
            f"{question(trust.folder)} Trusting it loads:\n{trust.listing()}",
            TRUST_OPTIONS,
            kind="trust",
            tool={"name": "trust", "arguments": {}, "loads": list(trust.loads)},
        )
        if answer not in TRUST_YES:
            self.output.paragraph(trust.notice(TYPED_HOW) or "")
            return
        try:
            grant(session, trust, keep=TRUST_YES[answer])
        except TrustNotKept as exc:  # a link planted in its place: trust nothing
            self.output.say(f"Error: {exc}", "error")
            return
        self.trusted()

    def trusted(self) -> None:
        """The folder's own commands, modes and MCP servers came: the client hears of
        them."""
        self.advertise()
        self.update(
            {"sessionUpdate": "config_option_update", "configOptions": self.config_options()}
        )
        self.watch()

    async def run_turn(self, text: str, attachments: list[dict[str, Any]]) -> dict[str, Any]:
        result = await self.turn(text, attachments)  # a refused attachment: -32602
        if result.stop_reason == "cancelled":
            self.output.interrupted()
            return {"stopReason": "cancelled"}
        answer: dict[str, Any] = {"stopReason": result.stop_reason}
        if result.stop_reason == "error":  # ACP has no such stop reason: the error was said
            answer = {"stopReason": "end_turn", "_meta": {"elelem": {"stopReason": "error"}}}
        counts = updates.usage(result.usage)
        if counts:
            answer["usage"] = counts
        self.report_usage(result)
        return answer

    async def run_command(self, line: str) -> dict[str, Any]:
        session = self.session
        before = (session.provider_name, session.model, self.commands())
        trusted_before = session.trust is None or session.trust.trusted
        result = await self.command(line)
        printed = EXIT_TEXT if result.exit else result.output  # the editor owns its life
        if printed.strip():  # its own chunk: a /compact's streamed text came before it
            self.output.paragraph(printed if result.markdown else updates.fenced(printed))
        if before[:2] != (session.provider_name, session.model):
            self.provider_changed()
        trust = session.trust
        if before[2] != self.commands():
            self.advertise()
        if trust is not None and trust.trusted and not trusted_before:  # `/trust`
            self.ask_trust = False
            self.update(
                {"sessionUpdate": "config_option_update", "configOptions": self.config_options()}
            )
        if session.last_turn is not None and line.startswith("/compact"):
            self.report_usage(session.last_turn)
        self.watch()  # a /reload may have given the session its first MCP servers
        return {"stopReason": "end_turn"}

    async def replay(self) -> None:
        """The stored conversation as `session/load` sends it: the messages as
        `user_message_chunk` / `agent_message_chunk`, each tool call between them as a
        `tool_call` and its `tool_call_update` (store.recorder.history), a compaction as
        an agent chunk `COMPACTED`. Sent a page at a time (store/pages.py's bound),
        letting the loop answer other requests between pages."""
        async with self.replaying:
            await self._replay()

    async def _replay(self) -> None:
        from ...store import pages
        from ...store.recorder import entries

        kinds = {"user": "user_message_chunk", "assistant": "agent_message_chunk"}
        last = None  # a client joins chunks of one kind: two messages stay two paragraphs
        kept, _ = entries(self.session)
        kept = list(kept)  # as it is now: a turn meanwhile adds to the live one
        weight = 0
        for entry in kept:
            weight += pages.weight(entry)
            if weight > pages.PAGE_WEIGHT:
                weight = 0
                await asyncio.sleep(0)  # a page sent: the other requests' turn
            if entry["type"] == "compacted":
                self.update(updates.chunk("agent_message_chunk", COMPACTED))
                last = None
                continue
            if entry["type"] == "tool":
                call = {"id": entry["id"], "name": entry["name"], "arguments": entry["arguments"]}
                self.output.replay_call(call, entry["ok"], entry["result"])
                last = None
                continue
            if entry.get("prompt") is False:
                continue  # a compaction's summary: the model's to read, not the user's words
            kind = kinds.get(entry["role"])
            if kind and entry["content"]:
                text = apart(text_of(entry["content"]))
                self.output.new_message()  # each kept message its own `messageId`
                self.update(updates.chunk(kind, f"\n\n{text}" if kind == last else text))
                last = kind
        from ...turns.plans import last_plan

        plan = last_plan(kept)
        if plan is not None:  # the last plan, drawn again
            self.planned(plan["entries"])

    # -- how full the context is --------------------------------------------------------
    def look_up_window(self) -> None:
        """Ask the provider its context window now, in the background, so a turn's
        `usage_update` need not wait for it (providers/window.py)."""
        lookup = getattr(self.session.provider, "context_window", None)
        self.window = asyncio.ensure_future(lookup()) if callable(lookup) else None
        if self.window is not None:
            self.window.add_done_callback(_quiet)

    def report_usage(self, result: TurnResult) -> None:
        """`usage_update` once a turn's provider reported tokens and the window is known:
        at once if the lookup is done, else when it is (and the provider is the same)."""
        used, window, provider = result.context_tokens, self.window, self.session.provider
        if used is None or window is None:
            return

        def send(done: asyncio.Future[int | None]) -> None:
            if done.cancelled() or done.exception() is not None:
                return
            size = done.result()
            if size is not None and self.session.provider is provider:
                cost = self.session.usage.report()["session"]["cost"]
                self.update(updates.usage_update(used, size, cost))

        if window.done():
            send(window)
        else:
            window.add_done_callback(send)

    # -- what the client can pick ----------------------------------------------------
    def provider_changed(self) -> None:
        """The provider or model changed (`/provider`, `/model`, set_config_option): a
        `config_option_update` whichever way, and a new window lookup."""
        self.look_up_window()
        self.served = self.session.answering
        self.update(
            {"sessionUpdate": "config_option_update", "configOptions": self.config_options()}
        )

    def mode_changed(self, mode: Any) -> None:
        """The mode changed (set_mode, set_config_option `mode`, `/mode`): the same two
        updates whichever way, `current_mode_update` then `config_option_update`."""
        self.update({"sessionUpdate": "current_mode_update", "currentModeId": mode.id})
        self.update(
            {"sessionUpdate": "config_option_update", "configOptions": self.config_options()}
        )

    def planned(self, entries: list[dict[str, str]]) -> None:
        """ACP's `plan` update: the whole list each time (`todo`), every entry `medium`
        (the tool has no priorities)."""
        self.update(updates.plan(entries))

    def commands(self) -> list[dict[str, Any]]:
        listed = []
        for slashed, description in self.session.commands:  # /exit is hidden here
            name = slashed.lstrip("/")
            entry: dict[str, Any] = {"name": name, "description": description}
            hints = self.session.commands.completions_for(name)
            if hints:
                entry["input"] = {"hint": " | ".join(hints[:6])}
            listed.append(entry)
        return listed

    def advertise(self) -> None:
        self.advertised = self.commands()
        self.update(
            {"sessionUpdate": "available_commands_update", "availableCommands": self.advertised}
        )

    # -- MCP servers (docs/mcp.md, "For faces") ------------------------------------------
    def watch(self) -> None:
        """Listen to the session's MCP manager, if it has one: a server's prompts coming
        or going re-advertise the commands; its browser step is said in the chat."""
        manager = getattr(self.session, "mcp", None)
        if manager is None or manager is self.watched:
            return
        self.watched = manager
        manager.listeners.append(self.servers_changed)
        manager.on_authorize = self.authorize

    def servers_changed(self, manager: Any) -> None:
        if not self._pending:  # the changes of one pass of the event loop: one update
            self._pending = True
            asyncio.get_running_loop().call_soon(self._readvertise)

    def _readvertise(self) -> None:
        self._pending = False
        if self.advertised is not None and self.commands() != self.advertised:
            self.advertise()

    def authorize(self, name: str, url: str) -> None:
        self.update(
            updates.chunk(
                "agent_message_chunk",
                f"\nMCP server {name} needs authorization: open {url} in your browser.\n",
            )
        )

    def config_options(self) -> list[dict[str, Any]]:
        return options.config_options(self.session, self.booleans)

    def modes(self) -> dict[str, Any]:
        """The session's modes (modes.py), as ACP's `SessionModeState`."""
        modes = self.session.modes
        return {
            "currentModeId": modes.current.id,
            "availableModes": [m.shown() for m in modes.available()],
        }


def _quiet(done: asyncio.Future[Any]) -> None:
    """A lookup that failed is only an unknown window (providers log why)."""
    if not done.cancelled() and done.exception() is not None:
        log.info("acp: context window lookup failed: %s", done.exception())


def _cancels() -> int:
    """How many cancels of the running task are pending now (`Task.cancelling`)."""
    me = asyncio.current_task()
    return me.cancelling() if me is not None else 0


def _take_back(before: int) -> None:
    """The running task caught a cancel and answers instead of raising: take back the
    cancels asked of it since it had `before` (`Task.uncancel`, as `Live.turn` does), so
    nothing after this in the task believes it is still being cancelled."""
    me = asyncio.current_task()
    while me is not None and me.cancelling() > before:
        me.uncancel()
