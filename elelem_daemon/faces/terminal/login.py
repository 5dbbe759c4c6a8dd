"""`elelem login` and `elelem logout`: the sign-in every face shares (base/signin.py).

`login` asks, in the terminal, which provider to use and what it needs (a key, a
server's address), checks the answer with one real request (providers/check.py), and
keeps it for elelem alone. It is also ACP's Terminal Auth: an editor that declares
`clientCapabilities.auth.terminal` runs `elelem --login` (or appends `--login` to the
agent's command) in a terminal, and a zero exit means signed in (docs/acp.md).

A key is read without echo and never printed; nothing is written until the check
passes. With no terminal on stdin, `login` refuses (exit 2) instead of waiting.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable
from dataclasses import dataclass

from ...base import keys, signin
from .visible import visible

TRIES = 3
MAX_ANSWER = 2000  # characters of one answer (signin.py keeps values under 4096)


@dataclass(frozen=True)
class Choice:
    label: str
    provider: str
    ask: tuple[tuple[str, str, str], ...]  # (variable, question, default); "" = required


CHOICES = (
    Choice("Anthropic (an API key)", "anthropic", (("ANTHROPIC_API_KEY", "API key", ""),)),
    Choice("OpenAI (an API key)", "openai", (("OPENAI_API_KEY", "API key", ""),)),
    Choice(
        "An OpenAI-compatible server (its address, and a key if it needs one)",
        "openai",
        (
            ("OPENAI_BASE_URL", "Address, ending in /v1", ""),
            ("OPENAI_API_KEY", "API key (Enter for none)", "-"),
        ),
    ),
    Choice("Ollama", "ollama", (("OLLAMA_HOST", "Address", "127.0.0.1:11434"),)),
    Choice(
        "A local model server (llama.cpp's llama-server on this machine)",
        "openai",
        (("OPENAI_BASE_URL", "Address", "http://127.0.0.1:8080/v1"),),
    ),
)


def login(
    check: Callable[[str, dict[str, str]], str | None],
    read: Callable[[str], str] = input,
    secret: Callable[[str], str] = getpass.getpass,
    interactive: bool | None = None,
) -> int:
    """The interactive sign-in; 0 when a checked provider was kept. `check` makes the
    one real request (providers/check.py; the launcher passes it, as faces do not
    import the providers)."""
    if interactive is None:
        interactive = sys.stdin.isatty()
    if not interactive:
        print("elelem login: needs a terminal (run it in one)", file=sys.stderr)
        return 2
    print("Sign in to a model provider for elelem. Which one?")
    for number, offered in enumerate(CHOICES, 1):
        print(f"  {number}. {offered.label}")
    choice = pick(read)
    if choice is None:
        print("elelem login: nothing chosen; nothing changed", file=sys.stderr)
        return 1
    for _ in range(TRIES):
        values = answers(choice, read, secret)
        if values is None:
            print("elelem login: nothing changed", file=sys.stderr)
            return 1
        print("Checking…", flush=True)
        problem = check(choice.provider, values)
        if problem is None:
            kept = signin.save(choice.provider, values)
            where = values.get("OPENAI_BASE_URL") or values.get("OLLAMA_HOST") or ""
            print(visible(f"Signed in: {choice.provider}{' at ' + where if where else ''}."))
            print(visible(f"Kept in {kept} (only you can read it). `elelem logout` forgets it."))
            if any(keys.environ().get(var) for var in signin.GROUPS[choice.provider]):
                print("Note: this provider's variables are set in your environment; they win.")
            return 0
        print(visible(f"That did not work: {problem}"))
    print("elelem login: nothing changed", file=sys.stderr)
    return 1


def pick(read: Callable[[str], str]) -> Choice | None:
    for _ in range(TRIES):
        try:
            answer = read(f"Provider [1-{len(CHOICES)}]: ").strip()
        except EOFError:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(CHOICES):
            return CHOICES[int(answer) - 1]
        print(f"Type a number from 1 to {len(CHOICES)}.")
    return None


def answers(
    choice: Choice, read: Callable[[str], str], secret: Callable[[str], str]
) -> dict[str, str] | None:
    values: dict[str, str] = {}
    for variable, question, default in choice.ask:
        hidden = variable.endswith("_KEY")
        prompt = f"{question}{f' [{default}]' if default not in ('', '-') else ''}: "
        try:
            answer = (secret(prompt) if hidden else read(prompt)).strip()
        except EOFError:
            return None
        if not answer and default == "":
            print(f"{question} is needed.")
            return None
        if any(ord(c) < 32 or ord(c) == 127 for c in answer) or len(answer) > MAX_ANSWER:
            print(f"{question}: at most {MAX_ANSWER} characters, none of them control ones.")
            return None
        values[variable] = answer or ("" if default == "-" else default)
    return {k: v for k, v in values.items() if v}


def logout() -> int:
    """Forget the sign-in (keys in the environment are the user's own: untouched)."""
    if signin.forget():
        print(visible(f"Signed out: {signin.path()} removed."))
    else:
        print("Not signed in; nothing to forget.")
    return 0
