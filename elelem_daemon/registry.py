"""Registry: providers, setup blocks and input/output factories, and the Plugin door.

A Registry may have a parent: the daemon keeps one for the built-ins and installed
packages, and a child per project with the plugin files of that working directory.

A provider name nobody registered is tried once as the package `elelem_NAME`, and only
when NAME looks like a package's name (lower-case letters, digits, `-`, `_`; not our own
`daemon`). Failing that, the error lists the providers there are, suggests a close one,
and says `pip install` only for a package in KNOWN_PACKAGES: any other name could be
registered on PyPI by anyone.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base.errors import UnknownProvider
from .tool import checked_kind

if TYPE_CHECKING:
    from .ports import Provider
    from .session import Session

ProviderFactory = Callable[..., Any]
Setup = Callable[["Session"], Any]

# provider name -> the PyPI package that provides it, for packages this project vouches
# for. None is published yet; add one here when it is.
KNOWN_PACKAGES: dict[str, str] = {}
PACKAGE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")
RESERVED = frozenset({"daemon"})  # elelem_daemon is this package, not a provider
EVENTS = ("turn_start", "turn_end", "close", "delete")  # what `plugin.on` can hook


@dataclass
class Origin:
    """Where a plugin came from: `builtin`, `entry-point`, `user` or `project`."""

    name: str
    source: str
    path: str | None = None
    error: str | None = None


@dataclass
class Registry:
    parent: Registry | None = None
    providers: dict[str, ProviderFactory] = field(default_factory=dict)
    setups: dict[str, Setup] = field(default_factory=dict)
    input_factory: Callable[..., Any] | None = None
    output_factory: Callable[..., Any] | None = None
    origins: list[Origin] = field(default_factory=list)
    hooks: dict[str, list[Callable[..., Any]]] = field(default_factory=dict)  # `delete`

    def child(self) -> Registry:
        return Registry(parent=self)

    def plugin(self, name: str, source: str = "builtin", path: str | None = None) -> Plugin:
        origin = Origin(name, source, path)
        self.origins.append(origin)
        return Plugin(self, origin)

    # -- layered lookups -------------------------------------------------------
    def all_setups(self) -> dict[str, Setup]:
        inherited = self.parent.all_setups() if self.parent else {}
        return {**inherited, **self.setups}

    def all_providers(self) -> dict[str, ProviderFactory]:
        inherited = self.parent.all_providers() if self.parent else {}
        return {**inherited, **self.providers}

    def all_hooks(self, event: str) -> list[Callable[..., Any]]:
        """The registry-level hooks of `event` (`delete`), the parent's first."""
        inherited = self.parent.all_hooks(event) if self.parent else []
        return inherited + self.hooks.get(event, [])

    def all_origins(self) -> list[Origin]:
        return (self.parent.all_origins() if self.parent else []) + self.origins

    def input_factory_of(self) -> Callable[..., Any] | None:
        """The terminal Input a plugin put in place (here or in a parent), if any."""
        inherited = self.parent.input_factory_of() if self.parent else None
        return self.input_factory or inherited

    def output_factory_of(self) -> Callable[..., Any] | None:
        """The terminal Output a plugin put in place (here or in a parent), if any."""
        inherited = self.parent.output_factory_of() if self.parent else None
        return self.output_factory or inherited

    def provider_names(self) -> list[str]:
        return sorted(self.all_providers())

    def build_provider(self, name: str, model: str | None = None) -> Provider:
        """Build a provider by name, importing the package `elelem_NAME` once if needed."""
        factory = self.all_providers().get(name)
        if factory is None:
            self._import_provider_package(name)
            factory = self.all_providers().get(name)
            if factory is None:
                raise UnknownProvider(f'elelem-{name} did not register a provider named "{name}"')
        return factory(model=model)

    def _import_provider_package(self, name: str) -> None:
        if not PACKAGE_NAME.fullmatch(name) or name in RESERVED:
            raise self.unknown(name)
        package = f"elelem_{name.replace('-', '_')}"
        try:
            module = importlib.import_module(package)
        except ImportError as exc:
            if exc.name != package:
                raise UnknownProvider(f"elelem-{name} failed to import: {exc}") from exc
            raise self.unknown(name) from None
        register = getattr(module, "register", None)
        if callable(register):
            register(self.plugin(package, "package"))

    def unknown(self, name: str) -> UnknownProvider:
        """`unknown provider: "NAME". Available: a, b.`, a close name, a known package."""
        names = self.provider_names()
        shown = json.dumps(name[:64], ensure_ascii=False)[1:-1] + ("..." if len(name) > 64 else "")
        text = f'unknown provider: "{shown}". Available: {", ".join(names)}.'
        close = difflib.get_close_matches(name.lower()[:64], names, n=1)
        if close:
            text += f' Did you mean "{close[0]}"?'
        if name in KNOWN_PACKAGES:
            text += f" Run: pip install {KNOWN_PACKAGES[name]}"
        return UnknownProvider(text)


class Plugin:
    """What a plugin's `register(plugin)` receives: the one door for every extension.

    `provider`, `setup`, `input` and `output` register directly. `tool`, `command`,
    `mode`, `before`, `after` and `on` are shorthands that register a setup block; their
    handlers receive the session first (but `on("delete")`: no session is open).
    """

    def __init__(self, registry: Registry, origin: Origin) -> None:
        self.registry = registry
        self.origin = origin
        self._count = 0

    def provider(self, name: str, factory: ProviderFactory | None = None) -> Any:
        """Register `factory(model=None) -> provider` under name; called on every build."""
        if factory is None:
            return _decorator(lambda fn: self.provider(name, fn))
        self.registry.providers[name] = factory
        return self

    def setup(self, block: Setup | None = None, name: str | None = None) -> Any:
        """Register a block that runs against every new session."""
        if block is None:
            return _decorator(lambda fn: self.setup(fn, name))
        self._count += 1
        key = name or f"{self.origin.name}:{getattr(block, '__name__', self._count)}"
        self.registry.setups[key] = block
        return self

    def input(self, factory: Callable[..., Any]) -> Plugin:
        """Replace the terminal Input: `factory(commands=...)`."""
        self.registry.input_factory = factory
        return self

    def output(self, factory: Callable[..., Any]) -> Plugin:
        """Replace the terminal Output: `factory()`."""
        self.registry.output_factory = factory
        return self

    def tool(
        self,
        name: str,
        description: str = "",
        params: dict[str, Any] | None = None,
        required: list[str] | tuple[str, ...] = (),
        aliases: list[str] | tuple[str, ...] = (),
        kind: str = "other",
        fine: tuple[int, ...] = (0,),
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorate `handler(session, args)` as a tool added to every session; `kind` is
        what it does (tool.KINDS: `read`, `edit`, `search`, `execute`, ...); `fine`, the
        exit statuses of a result's `exit_status` that are not a failure (`grep` finding
        nothing is 1: `(0, 1)`)."""
        checked_kind(kind)  # a bad kind fails the plugin's load, not every session

        def decorate(handler: Callable[..., Any]) -> Callable[..., Any]:
            def add(session: Session) -> None:
                bound = _bind(handler, session)
                session.toolbox.add(name, description, params, required, aliases, bound, kind, fine)

            self.setup(add, f"{self.origin.name}:tool:{name}")
            return handler

        return decorate

    def command(
        self, name: str, description: str = "", completions: Any = None
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorate `handler(session, args)` as a slash command in every session."""

        def decorate(handler: Callable[..., Any]) -> Callable[..., Any]:
            def add(session: Session) -> None:
                done = completions(session) if callable(completions) else completions
                session.commands.register(name, description, done, _bind(handler, session))

            self.setup(add, f"{self.origin.name}:command:{name}")
            return handler

        return decorate

    def mode(
        self,
        id: str,
        name: str = "",
        description: str = "",
        prompt: str = "",
        tools: list[str] | tuple[str, ...] | None = None,
        prepare: Callable[..., Any] | None = None,
    ) -> Plugin:
        """Add a mode to every session (modes.py): `prompt` joins the system prompt
        while it is on, and `tools` (names, globs, `kind:KIND`; None: every tool) is
        what it lets run. `prepare(session)`, async, returns more text for its prompt
        before each turn."""
        from .turns.modes import Mode, valid_id

        if not valid_id(id):
            raise ValueError(f"a mode id is lower-case letters, digits, - and _: {id!r}")
        mode = Mode(
            id, name, description, prompt, None if tools is None else tuple(tools),
            "builtin" if self.origin.source == "builtin" else "plugin", prepare,
        )  # fmt: skip

        def add(session: Session) -> None:
            session.modes.add(mode)

        self.setup(add, f"{self.origin.name}:mode:{id}")
        return self

    def before(self, tool: str = "*") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorate `hook(session, args, ...)`, run before the tool (or every tool)."""
        return self._hook("before", tool)

    def after(self, tool: str = "*") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorate `hook(session, args, result, ...)`, run after the tool (or every tool)."""
        return self._hook("after", tool)

    def on(self, event: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorate a hook of a session's life (EVENTS): `turn_start` `hook(session,
        turn_id)` before a turn, `turn_end` `hook(session, turn_id, result)` after it
        (even failed or cancelled), `close` `hook(session)`, and `delete`
        `hook(session_id, cwd)` once a stored session is deleted."""
        if event not in EVENTS:
            raise ValueError(f"unknown event {event!r}: one of {', '.join(EVENTS)}")

        def decorate(hook: Callable[..., Any]) -> Callable[..., Any]:
            if event == "delete":
                self.registry.hooks.setdefault(event, []).append(hook)
                return hook

            def add(session: Session) -> None:
                session.hooks[event].append(_bind(hook, session))

            self.setup(add, f"{self.origin.name}:on:{event}:{hook.__name__}")
            return hook

        return decorate

    def _hook(self, when: str, tool: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def decorate(hook: Callable[..., Any]) -> Callable[..., Any]:
            def add(session: Session) -> None:
                getattr(session.toolbox, when)(_bind(hook, session), tool=tool)

            self.setup(add, f"{self.origin.name}:{when}:{tool}:{hook.__name__}")
            return hook

        return decorate


def _decorator(register: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A decorator that registers the function and gives it back unchanged."""

    def decorate(fn: Any) -> Any:
        register(fn)
        return fn

    return decorate


def _bind(fn: Callable[..., Any], session: Session) -> Callable[..., Any]:
    """fn with the session as its first argument, keeping coroutine functions async."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def bound_async(*args: Any, **kwargs: Any) -> Any:
            return await fn(session, *args, **kwargs)

        return bound_async
    return functools.partial(fn, session)
