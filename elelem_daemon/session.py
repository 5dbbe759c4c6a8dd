"""Session: an agent, an input and the slash commands. Setup blocks receive it."""

from __future__ import annotations

import contextvars
import logging
import uuid
from pathlib import Path
from typing import Any

from .agent import Agent
from .commands import Commands
from .filesystem import LocalFiles
from .io import NullInput
from .registry import Registry
from .store.store import Store, Stored
from .toolbox import Toolbox

log = logging.getLogger(__name__)
_captured: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "elelem_captured", default=None
)


class _Capturing:
    """Wraps the Output: inside Session.command, `say` is kept for the command's result."""

    def __init__(self, output: Any) -> None:
        self.inner = output

    def say(self, text: str, kind: str = "plain") -> None:
        captured = _captured.get()
        if captured is None:
            self.inner.say(text, kind)
        elif text and text.strip():
            captured.append(f"error: {text}" if kind == "error" else text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Session:
    def __init__(
        self,
        agent: Agent,
        input: Any = None,
        commands: Commands | None = None,
        registry: Registry | None = None,
        cwd: Path | str | None = None,
        provider_name: str = "stub",
        model: str | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex
        self.agent = agent
        self.agent.output = _Capturing(agent.output)
        self.input = input if input is not None else NullInput()
        self.agent.input = self.input
        self.commands = commands if commands is not None else Commands()
        self.registry = registry or Registry()
        self.cwd = Path(cwd or Path.cwd()).resolve()
        self.provider_name = provider_name
        self.model = model if model is not None else getattr(agent.provider, "model", None)
        self.exited = False
        self.project = True
        self.files: Any = LocalFiles()  # a face may put the editor here
        self.recorder: Any = None  # set when the session is stored (see recorder.py)

    # -- forwarded to the agent ---------------------------------------------
    @property
    def provider(self) -> Any:
        return self.agent.provider

    @provider.setter
    def provider(self, provider: Any) -> None:
        self.agent.provider = provider

    @property
    def toolbox(self) -> Toolbox:
        return self.agent.toolbox

    @property
    def output(self) -> Any:
        return self.agent.output

    @property
    def conversation(self) -> Any:
        return self.agent.conversation

    @property
    def context(self) -> list[dict[str, Any]]:
        return self.agent.context

    async def turn(self, prompt: str) -> str:
        return await self.agent.turn(prompt)

    # -- the session's own verbs ----------------------------------------------
    async def command(self, line: str) -> str:
        """Run a slash-command line; return what it printed."""
        name, args = Commands.parse(line)
        token = _captured.set(captured := [])
        try:
            if not await self.commands.run(name, args):
                known = " ".join(self.commands.names())
                self.output.say(f"unknown command: /{name}. Commands: {known}", "error")
        except Exception as exc:  # a failing command is one line, never a crash
            log.warning("agent: %s", exc)
            self.output.say(str(exc), "error")
        finally:
            _captured.reset(token)
        return "\n".join(captured)

    def switch(self, provider_name: str | None = None, model: str | None = None) -> None:
        """Rebuild the provider (by name and/or model); keeps the conversation."""
        name = provider_name or self.provider_name
        self.provider = self.registry.build_provider(name, model=model)
        self.provider_name = name
        self.model = getattr(self.provider, "model", model)

    def exit(self) -> None:
        self.exited = True

    def close(self) -> None:
        """Release what the session holds open (its stored file and lock)."""
        if self.recorder is not None:
            self.recorder.close()

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


def start(
    registry: Registry,
    provider: str = "stub",
    model: str | None = None,
    cwd: Path | str | None = None,
    input: Any = None,
    output: Any = None,
    plugin_files: bool = True,
    project: bool = True,
    terminal: bool = False,
    store: Store | None = None,
    stored: Stored | None = None,
) -> Session:
    """Build the provider, agent and session, then run every setup block against it.

    With `plugin_files`, the user's and (if `project`) the project's plugin files load
    into a child of `registry`, so each working directory gets its own. Input and
    Output default to the null forms, or in the `terminal` to a plugin's factories
    and then the terminal's own. With a `store`, the session is saved as it goes;
    with `stored`, it continues that stored session (its id and messages), saving
    the new messages to the same file if `store` is given too.
    """
    from .io import Input, NullOutput, Output
    from .plugins import project_registry

    cwd = Path(cwd or Path.cwd()).resolve()
    if plugin_files:
        registry = project_registry(registry, cwd, project)
    built = registry.build_provider(provider, model=model)
    commands = Commands()
    if output is None:
        output = (registry.factory("output") or Output)() if terminal else NullOutput()
    if input is None:
        input = (registry.factory("input") or Input) if terminal else NullInput
        input = input(commands=commands)
    agent = Agent(built, output=output, cwd=cwd)
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
    **options: Any,
) -> Session:
    """Start a session continuing `stored`: its cwd, and its provider and model unless given."""
    if provider is None or provider == stored.provider:
        provider, model = stored.provider, model or stored.model
    cwd = Path(stored.cwd)
    if not cwd.is_dir():
        log.warning("store: %s no longer exists; using %s", cwd, Path.cwd())
        cwd = Path.cwd()
    return start(registry, provider, model, cwd, store=store, stored=stored, **options)
