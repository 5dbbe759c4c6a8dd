"""Session: an agent, an input and the slash commands; what setup blocks receive.

Every face opens its sessions with `start` (a new one) or `resume` (a stored one
continued), and runs them with `turn` and `command`. A command's printed lines come
back in its `CommandResult`; `/exit` never ends anything by itself: the result says
`exit`, and the face's client decides (the terminal stops, an editor keeps it open).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent import Agent, TurnResult
from .changes import Seen
from .commands import Commands
from .conversation import Content, Conversation, Message
from .filesystem import Files, LocalFiles
from .io import Input, NullInput, NullOutput, Output
from .ports import Provider, SessionView
from .registry import Registry
from .result import Result
from .toolbox import Toolbox

if TYPE_CHECKING:
    from .store.recorder import Recorder
    from .store.store import Store, Stored

log = logging.getLogger(__name__)
MakeIo = Callable[[Registry, Commands], tuple[Input, Output]]
CLOSE_WAIT = 5.0  # seconds a closing session waits for its providers to close


@dataclass(frozen=True)
class CommandResult:
    """What a slash command printed (lines joined, errors as `error: ...`), and whether
    it asked to end the session (`/exit`), which is the client's to do."""

    output: str
    exit: bool = False


class Captured:
    """The Output while a command runs: `say` is kept for the command's result, every
    other event (a `/compact` turn streaming) goes on to the session's own Output."""

    def __init__(self, inner: Output) -> None:
        self.inner = inner
        self.lines: list[str] = []

    def say(self, text: str, kind: str = "plain") -> None:
        if text and text.strip():
            self.lines.append(f"error: {text}" if kind == "error" else text)

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
        self.project = True
        self.files: Files = LocalFiles()  # a face may put the editor here
        self.seen = Seen()  # what the agent read this turn (changes.py: conflicts)
        self.recorder: Recorder | None = None  # set when the session is stored
        self.permissions: Any = None  # the permission policy's (builtins/permissions.py)
        self._exit = False
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
    def last_turn(self) -> TurnResult | None:
        """The last turn's result: its reply, stop reason and token counts."""
        return self.agent.last

    async def turn(self, prompt: Content, keep: bool = True) -> TurnResult:
        """A turn; with `keep` false, one that leaves the conversation as it was. What
        the agent read in the last turn no longer counts (changes.Seen)."""
        self.seen.new_turn()
        try:
            return await self.agent.turn(prompt, keep)
        finally:
            self.seen.new_turn()

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
        return CommandResult("\n".join(captured.lines), exit)

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

    async def close(self) -> None:
        """Release what the session holds open: its stored file and lock, its provider."""
        if self.recorder is not None:
            self.recorder.close()
        self._release(self.provider)
        if self._closing:  # bounded: a provider that hangs on close costs CLOSE_WAIT
            _, late = await asyncio.wait(list(self._closing), timeout=CLOSE_WAIT)
            for task in late:
                task.cancel()

    def _release(self, provider: Provider) -> None:
        """Close a provider this session no longer uses (an HTTP provider's client)."""
        close = getattr(provider, "aclose", None)
        if close is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop to close it on (a plain script): left to the GC
            return
        task = loop.create_task(_quietly(close))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def reload(self) -> None:
        """Forget setups, clear tools and commands, re-read plugin files, rerun setups."""
        from .plugins import project_registry

        if self.registry.parent is not None:
            self.registry = project_registry(self.registry.parent, self.cwd, self.project)
        self.toolbox.clear()
        self.commands.clear()
        self.apply_setups()

    def apply_setups(self) -> None:
        for setup in self.registry.all_setups().values():
            setup(self)


if TYPE_CHECKING:

    def _a_session_is_a_session_view(session: Session) -> SessionView:
        return session  # mypy checks that Session has all that plugins may use


async def _quietly(close: Callable[[], Any]) -> None:
    try:
        await close()
    except Exception as exc:  # a provider that fails to close costs a log line
        log.warning("provider: closing failed: %s", exc)


def start(
    registry: Registry,
    provider: str = "stub",
    model: str | None = None,
    cwd: Path | str | None = None,
    input: Input | None = None,
    output: Output | None = None,
    plugin_files: bool = True,
    project: bool = True,
    make_io: MakeIo | None = None,
    store: Store | None = None,
    stored: Stored | None = None,
) -> Session:
    """Build the provider, agent and session, then run every setup block against it.

    With `plugin_files`, the user's and (if `project`) the project's plugin files load
    into a child of `registry`, so each working directory gets its own. Input and
    Output default to the null forms; `make_io(registry, commands)` builds them instead
    once the session's plugins have loaded (the terminal: a plugin's factories may
    replace its own). With a `store`, the session is saved as it goes; with `stored`,
    it continues that stored session (its id and messages), saving the new messages
    to the same file if `store` is given too.
    """
    cwd = Path(cwd or Path.cwd()).resolve()
    if plugin_files:
        from .plugins import project_registry

        registry = project_registry(registry, cwd, project)
    built = registry.build_provider(provider, model=model)
    commands = Commands()
    if make_io is not None:
        input, output = make_io(registry, commands)
    agent = Agent(built, output=output if output is not None else NullOutput(), cwd=cwd)
    if input is None:
        input = NullInput(commands=commands)
    session = Session(agent, input, commands, registry, cwd, provider, model)
    session.project = project
    if store is not None or stored is not None:
        from .store.recorder import record

        record(session, store, stored)
    session.apply_setups()
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
