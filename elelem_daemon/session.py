"""Session: an agent, an input and the slash commands; what setup blocks receive.

Every face opens its sessions with `start` (a new one) or `resume` (a stored one
continued), and runs them with `turn` and `command`. A command's printed lines come
back in its `CommandResult`; `/exit` never ends anything by itself: the result says
`exit`, and the face's client decides (the terminal stops, an editor keeps it open).

Turns and commands are numbered in one count that goes on across restarts (a stored
session continues from its last turn: `Conversation.last_turn`), so a turn's number
names it for good: checkpoints and `session/rewind` use it. A face that runs a task
opens its number first (`Live`: `open_number`), and the turn that task runs takes it;
a turn run directly (the terminal) numbers itself. Around each turn the plugins'
`turn_start` and `turn_end` hooks run (`plugin.on`), the end ones even when the turn
failed or was cancelled; `close` hooks run when the session closes. `delete` is how a
face deletes a stored session: the plugins' `delete` hooks forget what they kept of it.
`steer` sends a user message to the running turn (steering.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent import Agent, TurnCancelled, TurnResult
from .base.errors import AttachmentError, NotRunning, UnknownSession
from .commands import Commands
from .context import as_is, compaction
from .context.environment import Environment
from .conversation import Content, Conversation, Message
from .edits.changes import Seen
from .edits.filesystem import Files, LocalFiles
from .io import Input, NullInput, NullOutput, Output
from .ports import Provider, SessionView
from .registry import EVENTS, Registry
from .result import Result
from .toolbox import Toolbox
from .transcript import SystemPrompt, face_template
from .turns.modes import Modes
from .turns.plans import Plan
from .turns.usage import Meter

if TYPE_CHECKING:
    from .safety.trust import Trust
    from .safety.vetted import HeldFile
    from .store.recorder import Recorder
    from .store.store import Store, Stored
    from .turns.steering import Steer

log = logging.getLogger(__name__)
MakeIo = Callable[[Registry, Commands], tuple[Input, Output]]
CLOSE_WAIT = 5.0  # seconds a closing session waits for its providers to close
SESSION_EVENTS = tuple(e for e in EVENTS if e != "delete")  # what a session runs (plugin.on)


@dataclass(frozen=True)
class CommandResult:
    """What a slash command printed (lines joined, errors as `error: ...`), whether all
    of it is Markdown (`/tools`; a face renders it, else shows it as plain text), and
    whether it asked to end the session (`/exit`), which is the client's to do."""

    output: str
    exit: bool = False
    markdown: bool = False


class Captured:
    """The Output while a command runs: `say` is kept for the command's result, with
    the kind of each line; every other event (a `/compact` turn streaming) goes on to
    the session's own Output."""

    def __init__(self, inner: Output) -> None:
        self.inner = inner
        self.lines: list[str] = []
        self.kinds: set[str] = set()

    def say(self, text: str, kind: str = "plain") -> None:
        if text and text.strip():
            self.lines.append(f"error: {text}" if kind == "error" else text)
            self.kinds.add(kind)

    @property
    def markdown(self) -> bool:
        """Whether everything printed was Markdown."""
        return self.kinds == {"markdown"}

    def thinking(self, text: str) -> None:
        self.inner.thinking(text)

    def saying(self, text: str) -> None:
        self.inner.saying(text)

    def reply(self, text: str) -> None:
        self.inner.reply(text)

    def doing(self, call: dict[str, Any]) -> None:
        self.inner.doing(call)

    def result(self, call: dict[str, Any], result: Result) -> None:
        self.inner.result(call, result)

    def waiting(self) -> None:
        self.inner.waiting()


class Session:
    def __init__(
        self,
        agent: Agent,
        input: Input | None = None,
        commands: Commands | None = None,
        registry: Registry | None = None,
        cwd: Path | str | None = None,
        provider_name: str = "stub",
        model: str | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex
        self.agent = agent
        self.input: Input = input if input is not None else NullInput()
        self.commands = commands if commands is not None else Commands()
        self.registry = registry or Registry()
        self.cwd = Path(cwd or Path.cwd()).resolve()
        self.provider_name = provider_name
        self.model = model if model is not None else getattr(agent.provider, "model", None)
        self.project = True  # the folder is trusted: its plugins, rules, MCP servers load
        self.rules: tuple[tuple[str, str], ...] = ()  # (PATTERN, RULE) given on the command line
        self.trust: Trust | None = None  # how that was decided (trust.py), set by start
        self.held: list[HeldFile] = []  # the user's files held at start (vetted.py)
        self.files: Files = LocalFiles()  # a face may put the editor here
        self.seen = Seen()  # what the agent read this turn (changes.py: conflicts)
        self.recorder: Recorder | None = None  # set when the session is stored
        self.permissions: Any = None  # the permission policy's (builtins/permissions.py)
        self.skills: Any = None  # the skills' (builtins/skills.py)
        self.checkpoints: Any = None  # ports.Checkpointer (builtins/checkpoints.py), or None
        self.modes = Modes()  # the modes plugins registered, and the one on (modes.py)
        self.plan = Plan()  # the model's task list, from the `todo` tool (plans.py)
        self.usage = Meter()  # tokens, context and cost of the turns (turns/usage.py)
        agent.tool_filter = self.modes.allows
        agent.transcript.system_prompt.sections.append(self.modes.section)
        self.hooks: dict[str, list[Callable[..., Any]]] = {e: [] for e in SESSION_EVENTS}
        self.turns = 0  # the last number a turn or command got (see the module's docstring)
        self.turn_id: int | None = None  # the number of the turn running now
        self._opened: int | None = None  # a number a face opened that no turn took yet
        # what close() also ends, each awaited (bounded) and cancelled when late: an MCP
        # manager's aclose (mcp/manager.py), a plugin's own
        self.closers: list[Callable[[], Awaitable[Any]]] = []
        self._exit = False
        self._turning = False  # a kept turn was asked for and has not ended
        self._closing: set[asyncio.Task[None]] = set()

    # -- forwarded to the agent ---------------------------------------------
    @property
    def provider(self) -> Provider:
        return self.agent.provider

    @provider.setter
    def provider(self, provider: Provider) -> None:
        self.agent.provider = provider

    @property
    def toolbox(self) -> Toolbox:
        return self.agent.toolbox

    @property
    def output(self) -> Output:
        return self.agent.output

    @property
    def conversation(self) -> Conversation:
        return self.agent.conversation

    @property
    def context(self) -> list[Message]:
        return self.agent.context

    @property
    def system_prompt(self) -> SystemPrompt:
        """Where a plugin adds a section of its own (`sections`: builtins/skills.py)."""
        return self.agent.transcript.system_prompt

    @property
    def last_turn(self) -> TurnResult | None:
        """The last turn's result: its reply, stop reason and token counts."""
        return self.agent.last

    async def turn(
        self, prompt: Content, attachments: Sequence[Any] = (), keep: bool = True
    ) -> TurnResult:
        """One turn: the one entry every face uses, numbered and marked in the
        conversation. A text prompt is expanded first (context/expansion.py; not even
        imported for one that is its own message, `context.as_is`): its `@`
        mentions and the `attachments` a client sent become the user message the model
        reads and the conversation keeps; a bad one raises AttachmentError before
        anything is kept or sent, and the number a face opened for it is given back. A
        prompt already in parts (a list) goes as it is. The plugins' `turn_start` hooks
        run before it, their `turn_end` hooks after it, whatever happened (a cancel that
        comes while they run cuts them short, but the turn's result stands). With `keep`
        false it leaves the conversation as it was (/compact): numbered, and its hooks
        run (its tools' changes are checkpointed), but not marked: no rewind names it.
        A kept turn whose request would pass ELELEM_COMPACT_AT of the model's window
        compacts the history first (context/compaction.py), before its mark.
        What the agent read in the last turn no longer counts (changes.Seen)."""
        self.seen.new_turn()
        self._turning = keep  # a steer sent from now on goes with this turn
        try:
            if isinstance(prompt, str) and not as_is(prompt, attachments):
                from .context.expansion import for_session

                prompt = await for_session(self, prompt, attachments)
            elif attachments:
                raise AttachmentError(
                    "attachments go with a text prompt, not one already in parts",
                    reason="invalid",
                )
            if keep:  # past ELELEM_COMPACT_AT of the window: the history is summarised first
                await compaction.before_turn(self.agent, prompt)
        except AttachmentError:
            if self._opened is not None and self._opened == self.turns:
                self.turns -= 1  # nothing was kept or sent: no turn took place
            self._opened = None
            self._unsteered()
            raise
        except BaseException:
            self._unsteered()
            raise
        number = self._opened if self._opened is not None else self.open_number()
        self._opened = None
        if keep:
            self.conversation.begin_turn(number)
        self.turn_id = number
        ended: TurnResult | None = None  # once the agent's turn is over, what it kept
        if hasattr(self.provider, "cache_key"):
            self.provider.cache_key = self.id  # the provider's prompt cache follows the session
        try:
            await self.run_hooks("turn_start", number)
            ended = await self.agent.turn(prompt, keep)
            return ended
        except TurnCancelled as cancelled:
            ended = cancelled.result
            raise
        finally:
            self.usage.add(ended, self.provider, self.answering)
            self._unsteered()
            try:
                await self.run_hooks("turn_end", number, self.agent.last)
            except asyncio.CancelledError:
                if ended is None:
                    raise
                raise TurnCancelled(ended) from None  # a stop during the end hooks: the
                # turn was over, and its result (what the conversation kept) stands
            finally:
                self.turn_id = None
                self.seen.new_turn()

    def _unsteered(self) -> None:
        """The turn is over: steers no request took are dropped, and the user told."""
        self._turning = False
        for text in self.agent.steering.drop():
            self.output.say(f"steer not sent (the turn ended first): {text}", "info")

    @property
    def steerable(self) -> bool:
        """Whether a kept turn runs (from the moment `turn` is called): steers go to it."""
        return self._turning or (self.agent.in_turn and self.agent.keeping)

    def steer(self, text: str) -> Steer:
        """Queue `text` for the running turn's next provider request (steering.py).
        NotRunning when no turn runs that keeps its conversation (none, a command, or
        /compact's summary turn): the client sends a turn instead."""
        if not self.steerable:
            raise NotRunning("no turn is running: send the text as a turn", sessionId=self.id)
        return self.agent.steering.put(text)

    def open_number(self) -> int:
        """The next number of the count of turns and commands; the next turn takes it."""
        self.turns = max(self.turns, self.conversation.last_turn) + 1
        self._opened = self.turns
        return self.turns

    def close_number(self) -> None:
        """The task that opened a number is over (a command that ran no turn)."""
        self._opened = None

    async def run_hooks(self, event: str, *args: Any) -> None:
        """Run the hooks of `event` in order; one that fails costs a log line, never
        the turn."""
        for hook in list(self.hooks.get(event, [])):
            try:
                value = hook(*args)
                if inspect.isawaitable(value):
                    await value
            except Exception as exc:
                log.warning("%s hook failed: %s", event, exc, exc_info=True)

    # -- the session's own verbs ----------------------------------------------
    async def command(self, line: str) -> CommandResult:
        """Run a slash-command line; what it printed comes back, not on the Output."""
        name, args = Commands.parse(line)
        captured = Captured(self.agent.output)
        self.agent.output, self._exit = captured, False
        try:
            if not await self.commands.run(name, args):
                known = " ".join(self.commands.names())
                captured.say(f"unknown command: /{name}. Commands: {known}", "error")
        except Exception as exc:  # a failing command is one line, never a crash
            log.warning("agent: %s", exc)
            captured.say(str(exc), "error")
        finally:
            self.agent.output = captured.inner
        exit, self._exit = self._exit, False
        return CommandResult("\n".join(captured.lines), exit, captured.markdown)

    @property
    def answering(self) -> str | None:
        """The model that answers: the one the server's last answer named (a local
        server serves its own, whatever was asked for), else the provider's, else the
        session's."""
        named = getattr(self.provider, "answering", None) or getattr(self.provider, "model", None)
        return str(named) if named else self.model

    def switch(self, provider_name: str | None = None, model: str | None = None) -> None:
        """Rebuild the provider (by name and/or model); keeps the conversation. The
        provider it replaces is closed."""
        name = provider_name or self.provider_name
        old, self.provider = self.provider, self.registry.build_provider(name, model=model)
        self.provider_name = name
        self.model = getattr(self.provider, "model", model)
        self._release(old)

    def exit(self) -> None:
        """Ask to end the session (`/exit`): the running command's result says so."""
        self._exit = True

    async def close(self, timeout: float | None = None) -> None:
        """Release what the session holds open: its stored file and lock, its provider,
        whatever its plugins hold (their `close` hooks) and what its `closers` end (its
        MCP servers), all side by side. Bounded: a hook or closer not done within
        `timeout` seconds (CLOSE_WAIT by default) is cancelled (an MCP manager then kills
        its servers), and the others are not held up by it."""
        if self.recorder is not None:
            self.recorder.close()
        for hook in list(self.hooks.get("close", [])):  # side by side: a slow one holds no other
            self._background(_called(hook), "close hook")
        self._release(self.provider)
        closers, self.closers = self.closers, []
        for closer in closers:
            self._background(closer, "closing")
        if self._closing:
            _, late = await asyncio.wait(
                list(self._closing), timeout=CLOSE_WAIT if timeout is None else timeout
            )
            for task in late:
                task.cancel()
            if late:  # let them see the cancel (a last resort kill runs then)
                await asyncio.wait(late, timeout=0.2)

    def _release(self, provider: Provider) -> None:
        """Close a provider this session no longer uses (an HTTP provider's client)."""
        close = getattr(provider, "aclose", None)
        if close is not None:
            self._background(close, "provider: closing")

    def _background(self, close: Callable[[], Any], what: str) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop to close it on (a plain script): left to the GC
            return
        task = loop.create_task(_quietly(close, what))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def reload(self) -> None:
        """Forget setups, clear tools and commands, re-read plugin files, rerun setups."""
        from .plugins import project_registry

        if self.registry.parent is not None:
            self.registry = project_registry(self.registry.parent, self.cwd, self.project)
        self.toolbox.clear()
        self.commands.clear()
        for hooks in self.hooks.values():
            hooks.clear()
        self.modes.clear()
        self.apply_setups()
        self.modes.settle()  # the mode on, if it is still there; else build

    def apply_setups(self) -> None:
        for setup in self.registry.all_setups().values():
            setup(self)


if TYPE_CHECKING:

    def _a_session_is_a_session_view(session: Session) -> SessionView:
        return session  # mypy checks that Session has all that plugins may use


def _called(hook: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
    """A hook that may be sync or async, as a coroutine function."""

    async def call() -> Any:
        value = hook()
        if inspect.isawaitable(value):
            return await value
        return value

    return call


async def _quietly(close: Callable[[], Any], what: str) -> None:
    try:
        await close()
    except Exception as exc:  # a provider that fails to close costs a log line
        log.warning("%s failed: %s", what, exc)


def start(
    registry: Registry,
    provider: str = "stub",
    model: str | None = None,
    cwd: Path | str | None = None,
    input: Input | None = None,
    output: Output | None = None,
    plugin_files: bool = True,
    project: bool | None = True,
    make_io: MakeIo | None = None,
    store: Store | None = None,
    stored: Stored | None = None,
    store_now: bool = False,
    face: str = "terminal",
    rules: Sequence[tuple[str, str]] = (),
) -> Session:
    """Build the provider, agent and session, then run every setup block against it.

    `project` is what the client says of the folder's trust (trust.py): True or False,
    or None to let the trusted-folders file decide; `session.trust` records the
    outcome. With `plugin_files`, the user's and (if trusted) the project's plugin
    files load into a child of `registry`, so each working directory gets its own. Input and
    Output default to the null forms; `make_io(registry, commands)` builds them instead
    once the session's plugins have loaded (the terminal: a plugin's factories may
    replace its own). With a `store`, the session is saved as it goes; with `stored`,
    it continues that stored session (its id and messages), saving the new messages
    to the same file if `store` is given too. With `store_now`, a new session is stored
    at once rather than with its first message (a face whose clients keep the id).
    `face` says where the agent runs, for the system prompt's opening line
    (`transcript.FACES`: `terminal`, `editor`). `rules` are permission rules given on
    the command line, `(PATTERN, RULE)` (`elelem ask --allow`; docs/permissions.md).
    """
    from .safety.trust import decide
    from .safety.vetted import held

    cwd = Path(cwd or Path.cwd()).resolve()
    waiting = held()  # first: the first run records what is there (vetted.py)
    trust = decide(cwd, project)
    if plugin_files:
        from .plugins import project_registry

        registry = project_registry(registry, cwd, trust.trusted)
    built = registry.build_provider(provider, model=model)
    commands = Commands()
    if make_io is not None:
        input, output = make_io(registry, commands)
    agent = Agent(
        built,
        output=output if output is not None else NullOutput(),
        system_prompt=SystemPrompt(face_template(face), cwd, Environment.here(cwd)),
    )
    if input is None:
        input = NullInput(commands=commands)
    session = Session(agent, input, commands, registry, cwd, provider, model)
    session.project, session.trust, session.held = trust.trusted, trust, waiting
    session.rules = tuple(rules)
    if store is not None or stored is not None:
        from .store.recorder import record

        record(session, store, stored, now=store_now)
    session.apply_setups()
    if stored is not None:
        session.modes.restore(stored.mode)  # the mode it had, if it still exists
    return session


def resume(
    registry: Registry,
    store: Store | None,
    stored: Stored,
    provider: str | None = None,
    model: str | None = None,
    cwd: Path | str | None = None,
    **options: Any,
) -> Session:
    """Start a session continuing `stored`: in its cwd (or `cwd`), with its provider and
    model unless another provider is named (a model named alone replaces its model)."""
    if provider is None or provider == stored.provider:
        provider, model = stored.provider, model or stored.model
    where = Path(cwd or stored.cwd)
    if not where.is_dir():
        log.warning("store: %s no longer exists; using %s", where, Path.cwd())
        where = Path.cwd()
    return start(registry, provider, model, where, store=store, stored=stored, **options)


async def delete(
    registry: Registry, store: Store, session_id: str, cwd: Path | str | None = None
) -> None:
    """Delete a stored session (not one another process has open: SessionLocked), then
    let every plugin forget what it kept of it (the checkpoints: its `delete` hooks).
    `cwd` is its folder when the caller knows it; else the stored one."""
    where = cwd
    if where is None:
        with contextlib.suppress(UnknownSession):  # unreadable: deleted all the same
            where = store.head(session_id).cwd
    store.delete(session_id)
    if where:
        await forget(registry, session_id, where)


async def forget(registry: Registry, session_id: str, cwd: Path | str) -> None:
    """Run the `delete` hooks for a session that is gone (or was never stored)."""
    for hook in registry.all_hooks("delete"):
        try:
            value = hook(session_id, Path(cwd))
            if inspect.isawaitable(value):
                await value
        except Exception as exc:
            log.warning("delete hook failed: %s", exc, exc_info=True)
