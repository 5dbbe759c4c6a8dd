"""Built-in slash commands: /help /context /clear /tools /provider /model /reload
/trust /compact /cost /exit. /exit only asks: the command's result says `exit`, and the
client
decides (session.py)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from ..agent import TurnResult
from ..context import compaction
from ..control.editing import EditError, tokens
from ..conversation import image_bytes, images_in, text_of
from ..ports import SessionView
from ..registry import Plugin
from ..turns.usage import summary
from .context_edit import USAGE
from .context_edit import run as edit_context

log = logging.getLogger(__name__)
CONTEXT_VERBS = ["json", "delete", "edit"]
LIST_TIMEOUT = 10.0  # seconds for `/model` to hear what the server serves
MAX_LISTED = 100  # models `/model` shows


def preview(message: dict[str, Any]) -> str:
    lines = text_of(message.get("content")).splitlines()
    first = lines[0] if lines else ""
    more = len(first) > 60 or len(lines) > 1
    return first[:60] + ("..." if more else "")


def context_text(session: SessionView, args: str | None) -> str:
    messages = session.context
    if not args:
        lines = [
            f"  {n}. {m['role']}: {preview(m)} (~{tokens(m)} tokens)"
            for n, m in enumerate(messages, 1)
        ]
        last = getattr(session, "last_turn", None)
        if last is not None and last.usage:
            lines.append(usage_text(last.usage))
        return "\n".join(lines)
    if args == "json":
        return json.dumps([elided(m) for m in messages], indent=2, ensure_ascii=False)
    if args.isdigit() and 1 <= int(args) <= len(messages):
        return text_of(messages[int(args) - 1]["content"])
    return USAGE


def elided(message: dict[str, Any]) -> dict[str, Any]:
    """The message, each image's base64 data replaced by its size (`/context json`)."""
    content = message.get("content")
    if not isinstance(content, list) or not images_in(content):
        return message
    parts = [
        {**p, "data": f"[{image_bytes(p)} bytes of base64, not shown]"}
        if p.get("type") == "image"
        else p
        for p in content
    ]
    return {**message, "content": parts}


def usage_text(usage: dict[str, int]) -> str:
    """The token counts the provider reported for the last turn."""
    tokens = f"{usage.get('input_tokens', 0)} in, {usage.get('output_tokens', 0)} out"
    return f"  tokens, last turn: {tokens}"


def tools_text(session: SessionView) -> str:
    lines = []
    for tool in session.toolbox:
        summary = (tool.description.splitlines() or [""])[0]
        lines.append(f"- **{tool.name}** - {summary}")
        for name, spec in tool.params.items():
            need = ", required" if name in tool.required else ""
            about = f" - {spec['description']}" if spec.get("description") else ""
            lines.append(f"  - `{name}` ({spec.get('type', 'any')}{need}){about}")
        if tool.shown_aliases:
            lines.append(f"  - aliases: {', '.join(tool.shown_aliases)}")
    return "\n".join(lines)


def marked(names: list[str], active: str | None) -> str:
    """`a, b (active), c`: the list with the one in use marked."""
    return ", ".join(f"{name} (active)" if name == active else name for name in names)


def models_of(session: SessionView) -> list[str]:
    """The models the provider says it has (`provider.models`, optional), as strings."""
    models = getattr(session.provider, "models", None)
    return [str(m) for m in models] if isinstance(models, list | tuple) else []


async def served_models(session: SessionView) -> list[str]:
    """What the provider's server serves (`list_models()`, optional: the openai
    provider's `GET /models`, asked once), else `provider.models`."""
    lister = getattr(session.provider, "list_models", None)
    if callable(lister):
        try:
            async with asyncio.timeout(LIST_TIMEOUT):
                listed = await lister()
            return [str(m) for m in listed][:MAX_LISTED]
        except Exception as exc:  # a listing is a nicety: never an error
            log.info("/model: no listing: %s", exc)
    return models_of(session)[:MAX_LISTED]


def register(plugin: Plugin) -> None:
    @plugin.command("help", "Show available commands")
    def help_(session: SessionView, args: str | None) -> None:
        lines = [f"{name.ljust(12)} {about}" for name, about in session.commands]
        session.output.say("\n".join(lines))

    @plugin.command("context", "Show conversation context", CONTEXT_VERBS)
    async def context(session: SessionView, args: str | None) -> None:
        try:  # delete and edit: builtins/context_edit.py
            done = await edit_context(session, args) if args else None
        except EditError as exc:
            session.output.say(str(exc), "error")
            return
        if done is not None:
            session.output.say(done)
            return
        kind = "markdown" if args and args.isdigit() else "plain"  # message N as Markdown
        session.output.say(context_text(session, args), kind)

    @plugin.command("clear", "Clear conversation history")
    def clear(session: SessionView, args: str | None) -> None:
        session.conversation.clear()
        session.output.say("  → context cleared")

    @plugin.command("tools", "List available tools")
    def tools(session: SessionView, args: str | None) -> None:
        session.output.say(tools_text(session), "markdown")

    @plugin.command("provider", "Switch provider", lambda s: s.registry.provider_names())
    def provider(session: SessionView, args: str | None) -> None:
        if not args:
            names = marked(session.registry.provider_names(), session.provider_name)
            session.output.say(f"  → available: {names}")
            return
        session.switch(args)
        session.output.say(f"  → switched to {args}")

    @plugin.command("model", "Show or switch the model", lambda s: lambda: models_of(s))
    async def model(session: SessionView, args: str | None) -> None:
        if args:
            session.switch(model=args)
        answering = session.answering
        chosen = getattr(session.provider, "model", session.model)  # a server's own, once known
        asked = f" (asked for {chosen})" if chosen not in (None, answering) else ""
        session.output.say(f"  → model: {answering}{asked}")
        if models := await served_models(session):
            session.output.say(f"  → available: {marked(models, answering)}")
        await compaction.window_of(session.provider)  # bounded (providers/window.py)
        if note := getattr(session.provider, "window_note", None):
            session.output.say(f"  → {note}")

    @plugin.command("reload", "Reload plugins")
    def reload(session: SessionView, args: str | None) -> None:
        from ..safety import vetted

        session.reload()
        session.output.say("  → reloaded")
        session.held = vetted.held()  # your own files changed since approved: not loaded
        say_held(session)

    @plugin.command(
        "trust",
        "Trust this folder: load its own plugins, rules, modes, MCP servers "
        "(`/trust files`: your own files held as new or changed)",
    )
    def trust(session: SessionView, args: str | None) -> None:
        """The user's own word, typed (docs/permissions.md, "Trusted folders"): what
        no "approve every permission" setting of a client can answer. Kept in the
        trusted-folders file, as `session/trust`; TrustNotKept if it cannot be."""
        from ..safety.trust import grant, trusted_file

        if (args or "").strip() == "files":
            return trust_files(session)
        current = getattr(session, "trust", None)
        if current is None or current.trusted:
            session.output.say(f"  → {session.cwd} is trusted already")
            return
        listing = current.listing()
        grant(session, current, keep=True)
        loaded = f"; loaded:\n{listing}" if listing else ""
        session.output.say(f"  → trusted {current.folder} (kept in {trusted_file()}){loaded}")

    @plugin.command("compact", "Compress context")
    async def compact(session: SessionView, args: str | None) -> None:
        """Atomic: only a summary that ended normally replaces the history. The summary
        reads the conversation's cached prefix with the tool choice `none` (a tool call
        it returns is never run nor shown); a history too long for that, or one it
        failed on, is summarised in pieces instead (context/compaction.py)."""
        agent = getattr(session, "agent", None)
        if agent is None:
            session.output.say("compact failed: this session has no agent", "error")
            return
        count = len(session.conversation)
        done = await compaction.compact(agent, None, shown=True)
        spent, agent.spent = agent.spent, {}
        session.usage.add(TurnResult("", usage=spent), session.provider, session.answering)
        if not done:
            session.output.say("compact failed: the conversation is kept (/clear starts over)")
            return
        plural = "" if count == 1 else "s"
        session.output.say(f"  → compacted: {count} message{plural} became 1")

    @plugin.command("cost", "Show the session's tokens, context and cost")
    def cost(session: SessionView, args: str | None) -> None:
        if session.answering and session.answering != session.model:
            session.output.say(f"  → model: {session.answering} (served)")
        session.output.say(summary(session.usage, session.answering))

    @plugin.command("exit", "Exit elelem")
    def exit_(session: SessionView, args: str | None) -> None:
        session.exit()


def trust_files(session: SessionView) -> None:
    """`/trust files`: the user's word, typed, for the files held as shown (vetted.py).
    Only what was shown loads: a file changed since is listed, and loads when the user
    types it again, having seen it."""
    from ..safety import vetted

    shown = list(session.held)
    if shown:
        vetted.approve(shown)
        session.reload()
        session.output.say("  → loaded:\n" + "\n".join(f"  - {f.line()}" for f in shown))
    session.held = vetted.held()
    if session.held:
        say_held(session)
    elif not shown:
        session.output.say("  → no file of yours is held")


def say_held(session: SessionView) -> None:
    """The user's files held (as shown: `/trust files` loads exactly these)."""
    if session.held:
        listing = "\n".join(f"  - {f.line()}" for f in session.held)
        session.output.say(f"  → held (new or changed):\n{listing}\nType /trust files to load them")
